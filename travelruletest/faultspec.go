package travelruletest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ParseFault reads a fault written as KIND[:KEY=VALUE,...], the form
// "travelrule sandbox --fault" takes: KIND is a [FaultKind]'s name (such
// as "rate-limit" or "internal"), and the keys are
//
//	rate=0.5                   Fault.Rate, above 0 and at most 1 (default 1: every request)
//	times=1                    Fault.Times (default 0: no limit)
//	ops=initiate+resolve       Fault.Ops, operation names joined by "+" (default: all)
//	retry-after=2s             Fault.RetryAfter, a Go duration
//	latency=300ms              Fault.Latency, a Go duration
//
// such as "rate-limit:retry-after=2s,times=1" or "internal:ops=initiate".
// The operations are named as [Operation.String] names them. The fault is
// checked as [Server.SetFaults] checks it, and rate=0 is refused: a fault
// that hits nothing is left out. The error names the part at fault.
func ParseFault(spec string) (Fault, error) {
	name, args, colon := strings.Cut(spec, ":")
	kind, ok := faultKindNamed(name)
	if !ok {
		return Fault{}, fmt.Errorf("travelruletest: ParseFault: unknown fault kind %q (one of %s)", name, strings.Join(faultKindNames(), ", "))
	}
	f := Fault{Kind: kind, Rate: 1}
	if colon {
		for _, arg := range strings.Split(args, ",") {
			if err := f.setArg(arg); err != nil {
				return Fault{}, fmt.Errorf("travelruletest: ParseFault: %s: %w", name, err)
			}
		}
	}
	if err := f.check(); err != nil {
		return Fault{}, err
	}
	return f, nil
}

// setArg sets the field of f that arg, KEY=VALUE, names.
func (f *Fault) setArg(arg string) error {
	key, val, ok := strings.Cut(arg, "=")
	if !ok || val == "" {
		return fmt.Errorf("%q: want KEY=VALUE", arg)
	}
	var err error
	want := "a number"
	switch key {
	case "rate":
		f.Rate, err = strconv.ParseFloat(val, 64)
		if err == nil && !(f.Rate > 0 && f.Rate <= 1) {
			return fmt.Errorf("rate=%s: want a number above 0 and at most 1 (a fault that is to hit no request is left out)", val)
		}
	case "times":
		want = "a whole number"
		f.Times, err = strconv.Atoi(val)
	case "ops":
		f.Ops, err = operationsNamed(strings.Split(val, "+"))
		if err != nil {
			return err
		}
	case "retry-after", "latency":
		want = "a duration such as 2s or 300ms"
		d, derr := time.ParseDuration(val)
		if key == "latency" {
			f.Latency = d
		} else {
			f.RetryAfter = d
		}
		err = derr
	default:
		return fmt.Errorf("unknown key %q (rate, times, ops, retry-after or latency)", key)
	}
	if err != nil {
		return fmt.Errorf("%s=%s: want %s", key, val, want)
	}
	return nil
}

// faultKindNamed is the kind whose String is name.
func faultKindNamed(name string) (FaultKind, bool) {
	for k := FaultLatency; k <= lastFaultKind; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

// faultKindNames are the names of the kinds, in order.
func faultKindNames() []string {
	var names []string
	for k := FaultLatency; k <= lastFaultKind; k++ {
		names = append(names, k.String())
	}
	return names
}

// operationsNamed is the set of the operations names name.
func operationsNamed(names []string) (Operation, error) {
	var ops Operation
	for _, name := range names {
		i := slices.Index(opNames[:], name)
		if i < 0 {
			return 0, fmt.Errorf("unknown operation %q (one of %s)", name, strings.Join(opNames[:], ", "))
		}
		ops |= 1 << i
	}
	return ops, nil
}

// spec is f written as ParseFault reads it, with only the keys that differ
// from the defaults: ParseFault(f.spec()) is f, with a zero Rate as the 1
// it means.
func (f Fault) spec() string {
	var args []string
	if r := f.rate(); r != 1 {
		args = append(args, "rate="+strconv.FormatFloat(r, 'g', -1, 64))
	}
	if f.Times != 0 {
		args = append(args, "times="+strconv.Itoa(f.Times))
	}
	if f.Ops != 0 {
		args = append(args, "ops="+strings.ReplaceAll(f.Ops.String(), "|", "+"))
	}
	if f.RetryAfter != 0 {
		args = append(args, "retry-after="+f.RetryAfter.String())
	}
	if f.Latency != 0 {
		args = append(args, "latency="+f.Latency.String())
	}
	if len(args) == 0 {
		return f.Kind.String()
	}
	return f.Kind.String() + ":" + strings.Join(args, ",")
}
