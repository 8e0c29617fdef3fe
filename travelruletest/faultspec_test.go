package travelruletest_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	gotoken "go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/travelruletest"
)

func TestParseFault(t *testing.T) {
	for _, tt := range []struct {
		spec string
		want travelruletest.Fault
		err  string // in the error; "" for none
	}{
		{"internal", travelruletest.Fault{Kind: travelruletest.FaultInternal, Rate: 1}, ""},
		{"rate-limit:retry-after=2s,times=1", travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 1, Times: 1, RetryAfter: 2 * time.Second}, ""},
		{"latency:latency=300ms,rate=0.5,ops=initiate+resolve", travelruletest.Fault{Kind: travelruletest.FaultLatency, Rate: 0.5, Latency: 300 * time.Millisecond,
			Ops: travelruletest.OpInitiate | travelruletest.OpResolve}, ""},
		{"gateway-unavailable:ops=submit-txid", travelruletest.Fault{Kind: travelruletest.FaultGatewayUnavailable, Rate: 1, Ops: travelruletest.OpSubmitTxID}, ""},
		{"500", travelruletest.Fault{}, `unknown fault kind "500" (one of latency, rate-limit,`},
		{"", travelruletest.Fault{}, "unknown fault kind"},
		{"internal:", travelruletest.Fault{}, `"": want KEY=VALUE`},
		{"internal:times", travelruletest.Fault{}, `"times": want KEY=VALUE`},
		{"internal:times=x", travelruletest.Fault{}, "times=x: want a whole number"},
		{"internal:rate=2", travelruletest.Fault{}, "rate=2: want a number above 0 and at most 1"},
		{"internal:rate=0", travelruletest.Fault{}, "rate=0: want a number above 0 and at most 1 (a fault that is to hit no request is left out)"},
		{"internal:rate=-0.5", travelruletest.Fault{}, "rate=-0.5: want a number above 0"},
		{"internal:rate=NaN", travelruletest.Fault{}, "rate=NaN: want a number above 0"},
		{"internal:rate=x", travelruletest.Fault{}, "rate=x: want a number"},
		{"internal:ops=transfer", travelruletest.Fault{}, `unknown operation "transfer"`},
		{"rate-limit:retry-after=2", travelruletest.Fault{}, "retry-after=2: want a duration"},
		{"latency:latency=-1s", travelruletest.Fault{}, "negative"},
		{"internal:color=red", travelruletest.Fault{}, `unknown key "color"`},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := travelruletest.ParseFault(tt.spec)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestFaultKindDocListsKinds: go doc FaultKind shows each kind, by its
// constant and by the name ParseFault and the control plane take, as the
// constants' group is shown only by its first line.
func TestFaultKindDocListsKinds(t *testing.T) {
	fset := gotoken.NewFileSet()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/vaspkit/travelrule/travelruletest")
	require.NoError(t, err)
	var typeDoc string
	var consts []string
	for _, typ := range p.Types {
		if typ.Name == "FaultKind" {
			typeDoc = typ.Doc
			for _, v := range typ.Consts {
				consts = append(consts, v.Names...)
			}
		}
	}
	require.NotEmpty(t, consts)
	for i, name := range consts {
		kind := travelruletest.FaultKind(i + 1)
		assert.Contains(t, typeDoc, "["+name+"] \""+kind.String()+"\"", "FaultKind's doc lists %s", name)
		_, err := travelruletest.ParseFault(kind.String())
		assert.NoError(t, err)
	}
}
