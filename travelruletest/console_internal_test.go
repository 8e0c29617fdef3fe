package travelruletest

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

func TestConsoleRefusal(t *testing.T) {
	lan := []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24"), netip.MustParsePrefix("fd00::/8")}
	for _, tt := range []struct {
		name   string
		remote string
		host   string
		from   []netip.Prefix
		status int
	}{
		{"loopback v4", "127.0.0.1:5000", "127.0.0.1:8080", nil, 0},
		{"loopback v4, not .1", "127.9.8.7:5000", "127.0.0.1:8080", nil, 0},
		{"loopback v6", "[::1]:5000", "[::1]:8080", nil, 0},
		{"loopback v4-mapped", "[::ffff:127.0.0.1]:5000", "127.0.0.1:8080", nil, 0},
		{"a client on the network", "192.168.1.7:5000", "192.168.1.2:8080", nil, http.StatusForbidden},
		{"a client on the network, v4-mapped", "[::ffff:192.168.1.7]:5000", "192.168.1.2:8080", nil, http.StatusForbidden},
		{"a client let in", "192.168.1.7:5000", "192.168.1.2:8080", lan, 0},
		{"a client let in, v4-mapped", "[::ffff:192.168.1.7]:5000", "192.168.1.2:8080", lan, 0},
		{"a client let in, v6", "[fd12::7]:5000", "[fd12::2]:8080", lan, 0},
		{"a client beyond those let in", "192.168.2.7:5000", "192.168.1.2:8080", lan, http.StatusForbidden},
		{"an unspecified client", "0.0.0.0:5000", "127.0.0.1:8080", nil, http.StatusForbidden},
		{"no address", "", "127.0.0.1:8080", nil, http.StatusForbidden},
		{"not an address", "pipe", "127.0.0.1:8080", nil, http.StatusForbidden},
		{"Host: localhost", "127.0.0.1:5000", "localhost", nil, 0},
		{"Host: localhost with a port", "127.0.0.1:5000", "localhost:8080", nil, 0},
		{"Host: LOCALHOST", "127.0.0.1:5000", "LOCALHOST:8080", nil, 0},
		{"Host: under .localhost", "127.0.0.1:5000", "app.localhost:8080", nil, 0},
		{"Host: v6 without a port", "[::1]:5000", "[::1]", nil, 0},
		{"Host: another address", "127.0.0.1:5000", "10.1.2.3:8080", nil, 0},
		{"no Host", "127.0.0.1:5000", "", nil, 0},
		{"Host: a name", "127.0.0.1:5000", "evil.example", nil, http.StatusMisdirectedRequest},
		{"Host: a name with a port", "127.0.0.1:5000", "evil.example:8080", nil, http.StatusMisdirectedRequest},
		{"Host: a name that ends in localhost", "127.0.0.1:5000", "evillocalhost:8080", nil, http.StatusMisdirectedRequest},
		{"Host: localhost under a name", "127.0.0.1:5000", "localhost.evil.example", nil, http.StatusMisdirectedRequest},
		{"Host: a name, from a client let in", "192.168.1.7:5000", "console.lan", lan, http.StatusMisdirectedRequest},
		{"Host: a name, from a client refused", "192.168.1.7:5000", "evil.example", nil, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, why := consoleRefusal(tt.remote, tt.host, tt.from)
			assert.Equal(t, tt.status, status)
			if tt.status == 0 {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, "refused: ")
			}
		})
	}
}

func TestFaultSpecRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		fault Fault
		spec  string
	}{
		{Fault{Kind: FaultInternal, Rate: 1}, "internal"},
		{Fault{Kind: FaultDrop}, "drop"}, // Rate unset: every request, as rate 1
		{Fault{Kind: FaultRateLimit, Rate: 0.25, Times: 3, RetryAfter: 2 * time.Second}, "rate-limit:rate=0.25,times=3,retry-after=2s"},
		{Fault{Kind: FaultUnavailable, Rate: 1, RetryAfter: 1500 * time.Millisecond}, "unavailable:retry-after=1.5s"},
		{Fault{Kind: FaultLatency, Rate: 1, Latency: 300 * time.Millisecond, Ops: OpInitiate | OpResolve}, "latency:ops=initiate+resolve,latency=300ms"},
		{Fault{Kind: FaultGoAway, Rate: 1e-3, Ops: allOps}, "goaway:rate=0.001,ops=initiate+resolve+generate-travel-address+decode-travel-address+submit-txid"},
		{Fault{Kind: FaultGatewayUnavailable, Rate: 1, Times: 1, Ops: OpSubmitTxID, RetryAfter: time.Hour + time.Nanosecond}, "gateway-unavailable:times=1,ops=submit-txid,retry-after=1h0m0.000000001s"},
		{Fault{Kind: FaultResetRefusedStream, Rate: math.Nextafter(0.3, 1)}, "reset-refused-stream:rate=0.30000000000000004"},
		{Fault{Kind: FaultResetProtocolError, Rate: 1, Latency: MaxFaultLatency}, "reset-protocol-error:latency=24h0m0s"},
		{Fault{Kind: FaultProxyUnavailable, Rate: 1, Ops: OpDecodeTravelAddress}, "proxy-unavailable:ops=decode-travel-address"},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			assert.Equal(t, tt.spec, tt.fault.spec())
			got, err := ParseFault(tt.fault.spec())
			require.NoError(t, err)
			want := tt.fault
			want.Rate = want.rate()
			assert.Equal(t, want, got)
		})
	}
}

func TestConsoleViewLink(t *testing.T) {
	const id = "6f1c1b51-0b6d-4a47-9b3e-5b1e6c7d8e9f"
	for _, tt := range []struct {
		view consoleView
		id   string
		want string
	}{
		{consoleView{}, id, "/?transfer=" + id},
		{consoleView{Reveal: true}, id, "/?transfer=" + id + "&reveal=1"},
		{consoleView{Open: "other", Reveal: true}, "", "/?reveal=1"},
		{consoleView{Open: "other"}, "", "/"},
	} {
		// "/?" is "/" with an empty query.
		assert.Equal(t, tt.want, strings.TrimSuffix(tt.view.Link(tt.id), "?"))
	}
}

func TestIsConsolePath(t *testing.T) {
	for p, want := range map[string]bool{
		"/": true, "/console/": true, "/console/live": true, "/console/transfers/x/decision": true,
		"": false, "/console": false, "/consoles/x": false, "/transfers/initiate": false, "/api/v3/": false,
	} {
		assert.Equal(t, want, isConsolePath(p), p)
	}
}

func TestPartyName(t *testing.T) {
	for _, tt := range []struct {
		name   string
		party  travelrule.Party
		reveal bool
		want   string
	}{
		{"natural", travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace"}, true, "Ada Lovelace"},
		{"natural, first name only", travelrule.Party{PersonType: "natural", FirstName: "Ada"}, true, "Ada"},
		{"legal", travelrule.Party{PersonType: "LEGAL", LegalName: "Acme Ltd", FirstName: "Ada"}, true, "Acme Ltd"},
		{"legal without a legal name", travelrule.Party{PersonType: "legal", FirstName: "Ada", LastName: "Lovelace"}, true, "Ada Lovelace"},
		{"a natural person's legal name is not shown", travelrule.Party{PersonType: "natural", LegalName: "Acme Ltd"}, true, "—"},
		{"no name", travelrule.Party{PersonType: "natural"}, true, "—"},
		{"not revealed", travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace"}, false, "[redacted]"},
		{"not revealed, no name", travelrule.Party{}, false, "[redacted]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, partyName(&tt.party, tt.reveal))
		})
	}
}

func TestRevealed(t *testing.T) {
	assert.Equal(t, "ada@example.com", revealed("ada@example.com", true))
	assert.Equal(t, "[redacted]", revealed("ada@example.com", false))
	assert.Empty(t, revealed("", false), "nothing to redact shows as nothing")
	assert.Empty(t, revealed("", true))
}

func TestAwaitsSandbox(t *testing.T) {
	for _, tt := range []struct {
		name string
		t    transferRec
		want bool
	}{
		{"received, undecided", transferRec{Transfer: Transfer{State: StateReceived}}, true},
		{"decided, its callbacks not yet sent", transferRec{Transfer: Transfer{State: StateReceived}, decision: StateApproved}, false},
		{"approved", transferRec{Transfer: Transfer{State: StateApproved}, decision: StateApproved}, false},
		{"an inbound inquiry", transferRec{Transfer: Transfer{State: StateInquiry, Inquiry: true}}, false},
		{"the integrator resolves it", transferRec{Transfer: Transfer{State: StateInquiry}, resolvable: true}, false},
		{"the integrator resolves it, received", transferRec{Transfer: Transfer{State: StateReceived}, resolvable: true}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.t.awaitsSandbox())
		})
	}
}

func TestCallbackEvent(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	next := at.Add(time.Minute)
	d := Delivery{Kind: KindInquiryResolution, Status: StateApproved, URL: "https://u:p@vasp.example/cb?tag=cap-1#f"}
	failed := []Attempt{{Time: at, StatusCode: 500, Latency: 1500 * time.Microsecond}}
	noAnswer := []Attempt{{Time: at, Err: "connection refused"}}
	ok := []Attempt{{Time: at, StatusCode: 500}, {Time: next, StatusCode: 204, Latency: time.Millisecond}}
	for _, tt := range []struct {
		name      string
		attempts  []Attempt
		delivered bool
		pending   bool
		next      time.Time
		outcome   string
		bad       bool
		answers   []string
	}{
		{"pending, not yet attempted", nil, false, true, time.Time{}, "sending (announces approved)", false, nil},
		{"pending, waiting for a retry", failed, false, true, next, "retrying (announces approved)", true, []string{"500"}},
		{"pending, no answer", noAnswer, false, true, next, "retrying (announces approved)", true, []string{"no answer: connection refused"}},
		{"delivered", ok, true, false, time.Time{}, "delivered (announces approved)", false, []string{"500", "204"}},
		{"given up", failed, false, false, time.Time{}, "given up (announces approved)", true, []string{"500"}},
		{"not sent", nil, false, false, time.Time{}, "never attempted (the sandbox sends no callbacks, closed, or gave the inquiry up first)", false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := d
			d.Attempts, d.Delivered = tt.attempts, tt.delivered
			e := callbackEvent(d, tt.next, tt.pending, "the scheme", true)
			assert.Equal(t, "INQUIRY_RESOLUTION callback", e.Title)
			assert.Equal(t, tt.outcome, e.Outcome)
			assert.Equal(t, tt.bad, e.Bad)
			assert.Equal(t, "https://vasp.example/cb", e.URL, "no user, query or fragment")
			assert.Equal(t, "the scheme", e.Scheme)
			assert.Equal(t, tt.next, e.Next)
			var answers []string
			for i, a := range e.Attempts {
				answers = append(answers, a.Answer)
				assert.Equal(t, i+1, a.N)
				assert.Equal(t, tt.attempts[i].Time, a.Time)
				assert.Equal(t, tt.attempts[i].Latency, a.Latency)
				assert.Equal(t, a.Answer == "204", a.OK)
			}
			assert.Equal(t, tt.answers, answers)
			if len(tt.attempts) > 0 {
				assert.Equal(t, at, e.Time, "the time of its first attempt")
			} else {
				assert.True(t, e.Time.IsZero())
			}
		})
	}
}

// TestTimelineOrder: the timeline's steps come in the order they began,
// the callbacks not yet attempted last.
func TestTimelineOrder(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tr := &transferRec{Transfer: Transfer{ID: "t1", Created: at.Add(time.Millisecond), State: StateApproved},
		decision: StateApproved, decidedBy: decidedByConsole, decided: at.Add(3 * time.Second)}
	snap := consoleSnap{
		open: tr,
		requests: []Request{
			{Method: "POST", Path: "/transfers/initiate", Time: at, Status: 200},
			{Method: "POST", Path: "/transfers/txId", Time: at.Add(5 * time.Second), Status: 503, Faults: []FaultKind{FaultUnavailable}},
			{Method: "GET", Path: "/sandbox/transfers/t1", Time: at.Add(6 * time.Second), Status: 0},
		},
		finished: []Delivery{
			{Kind: KindInquiryResolution, Status: StateApproved, Delivered: true, Attempts: []Attempt{{Time: at.Add(4 * time.Second), StatusCode: 204}}},
			{Kind: KindTransferConfirmation, Status: StateApproved}, // WithoutCallbacks: never attempted
		},
		sending: []sendingRec{{Delivery: Delivery{Kind: KindTransferResolution, Status: StateCompleted,
			Attempts: []Attempt{{Time: at.Add(7 * time.Second), StatusCode: 500}}}, next: at.Add(8 * time.Second)}},
	}
	var titles, outcomes []string
	for _, e := range snap.timeline("s", false) {
		titles = append(titles, e.Title)
		outcomes = append(outcomes, e.Outcome)
	}
	assert.Equal(t, []string{"POST /transfers/initiate", "Initiated", "Decision", "INQUIRY_RESOLUTION callback",
		"POST /transfers/txId", "GET /sandbox/transfers/t1", "TRANSFER_RESOLUTION callback", "TRANSFER_CONFIRMATION callback"}, titles)
	assert.Equal(t, []string{"answered 200", "stored in state received", "approved by the console's button (as the beneficiary's VASP)",
		"delivered (announces approved)", "answered 503", "no answer (dropped, reset or abandoned)", "retrying (announces completed)",
		"never attempted (the sandbox sends no callbacks, closed, or gave the inquiry up first)"}, outcomes)
}

// TestConsoleSeesEveryChange: each change the console shows moves the
// records' version, so that an open page hears of it: the decision, the
// faults and their switch, and a callback's attempt.
func TestConsoleSeesEveryChange(t *testing.T) {
	s := NewServer(WithConsole(), WithCallbackRetry(2, time.Hour, time.Hour))
	t.Cleanup(s.Close)
	for _, tt := range []struct {
		name   string
		change func()
	}{
		{"SetDecision", func() { s.SetDecision(DecisionNone) }},
		{"SetFaults", func() { s.SetFaults(Fault{Kind: FaultInternal, Rate: 1}) }},
		{"the switch", func() { s.switchFaults(false) }},
		{"an attempt", func() {
			s.records.progress(Delivery{ID: "msg_1", TransferID: "t"}, true, time.Time{})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before, changed := s.records.watch()
			tt.change()
			after, _ := s.records.watch()
			assert.Greater(t, after, before)
			select {
			case <-changed:
			default:
				t.Fatal("the watcher was not woken")
			}
		})
	}
}

// TestNextAttemptNotAfterTheEnd: a callback whose context ends before its
// next attempt is due shows no next attempt: it is given up first.
func TestNextAttemptNotAfterTheEnd(t *testing.T) {
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(refuse.Close)
	for _, tt := range []struct {
		name     string
		deadline time.Duration
		wantNext bool
	}{
		{"a deadline before the retry", time.Minute, false},
		{"a deadline after it", 3 * time.Hour, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(WithCallbackRetry(2, time.Hour, time.Hour))
			t.Cleanup(s.Close)
			ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
			t.Cleanup(cancel)
			ev := &event{id: "msg_1", kind: KindInquiry, transferID: "t", status: StateInquiry, url: refuse.URL, body: []byte(`{}`)}
			done := make(chan Delivery, 1)
			go func() { done <- s.deliver(ctx, ev) }()
			var rec sendingRec
			require.Eventually(t, func() bool {
				s.records.mu.Lock()
				defer s.records.mu.Unlock()
				rec = s.records.sending["msg_1"]
				return len(rec.Attempts) == 1
			}, 10*time.Second, time.Millisecond, "the first attempt is recorded")
			assert.Equal(t, tt.wantNext, !rec.next.IsZero())
			cancel()
			<-done
		})
	}
}

// TestConsoleRedactsAsTheSendersForm: unrevealed, a party's personal
// fields are redacted and its codes shown only when they are IVMS101's,
// and the asset, amount and txId only in their own shapes, holding no
// personal value: an inbound inquiry's are the text of whoever sent it.
func TestConsoleRedactsAsTheSendersForm(t *testing.T) {
	req := &travelrule.TransferRequest{Originator: travelrule.Party{FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1906-12-09"}}
	for _, tt := range []struct {
		name, v string
		ok      bool
		reveal  bool
		want    string
	}{
		{"a ticker", "BTC", true, false, "BTC"},
		{"not in its shape", "Grace Hopper", false, false, "[redacted]"},
		{"in its shape but a name", "GRACE", true, false, "[redacted]"},
		{"a date inside", "tx-1906-12-09", true, false, "[redacted]"},
		{"revealed", "Grace Hopper", false, true, "Grace Hopper"},
		{"empty", "", false, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, shownValue(tt.v, tt.ok, req, tt.reveal))
		})
	}
	for _, tt := range []struct {
		v    string
		want bool
	}{{"BTC", true}, {"USDT.e", true}, {"Grace Hopper", false}, {"", false}} {
		assert.Equal(t, tt.want, isTicker(tt.v), "isTicker(%q)", tt.v)
	}
	for _, tt := range []struct {
		v    string
		want bool
	}{{"0.25", true}, {"10", true}, {"1.", false}, {".5", false}, {"1e9", false}, {"1906-12-09", false}} {
		assert.Equal(t, tt.want, isDecimal(tt.v), "isDecimal(%q)", tt.v)
	}
	for _, tt := range []struct {
		v    string
		want bool
	}{{"0xabc", true}, {"a:b_c.d-e", true}, {"Grace Hopper", false}, {strings.Repeat("a", 129), false}} {
		assert.Equal(t, tt.want, isIdentifier(tt.v), "isIdentifier(%q)", tt.v)
	}

	hostile := &travelrule.Party{PersonType: "Grace Hopper", FirstName: "Grace", Country: "Grace", AddressType: "GEOG",
		NationalIDType: "<b>", WalletAddress: "bc1q"}
	assert.Equal(t, []consoleField{
		{"Person type", "[redacted]"}, {"First name", "[redacted]"}, {"Address type", "GEOG"},
		{"Country", "[redacted]"}, {"National id type", "[redacted]"}, {"Wallet address", "[redacted]"},
	}, partyFields(hostile, false))
	assert.Equal(t, []consoleField{
		{"Person type", "Grace Hopper"}, {"First name", "Grace"}, {"Address type", "GEOG"},
		{"Country", "Grace"}, {"National id type", "<b>"}, {"Wallet address", "bc1q"},
	}, partyFields(hostile, true))
	assert.Equal(t, []consoleField{{"Person type", "natural"}, {"Country", "GB"}},
		partyFields(&travelrule.Party{PersonType: "natural", Country: "GB"}, false))
}

// TestAttemptText: unrevealed, an attempt's error stops at what net/http
// quotes of the receiver's answer.
func TestAttemptText(t *testing.T) {
	for _, tt := range []struct {
		err    string
		reveal bool
		want   string
	}{
		{`malformed HTTP status code "none-Lovelace-1815-12-10"`, false, "malformed HTTP status code […]"},
		{`malformed HTTP status code "none-Lovelace-1815-12-10"`, true, `malformed HTTP status code "none-Lovelace-1815-12-10"`},
		{"dial tcp 127.0.0.1:1: connect: connection refused", false, "dial tcp 127.0.0.1:1: connect: connection refused"},
	} {
		assert.Equal(t, tt.want, attemptText(tt.err, tt.reveal), tt.err)
	}
}

// TestWithConsolePrefixes: a prefix of IPv4-mapped addresses is the IPv4
// one, as the console sees its clients, and a zoned client matches its
// prefix.
func TestWithConsolePrefixes(t *testing.T) {
	var c config
	WithConsole(netip.MustParsePrefix("::ffff:10.0.0.0/104"), netip.MustParsePrefix("fe80::/10"))(&c)
	require.NoError(t, c.err)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fe80::/10")}, c.consoleFrom)
	status, _ := consoleRefusal("10.1.2.3:5000", "10.0.0.1", c.consoleFrom)
	assert.Zero(t, status, "an IPv4 client of the mapped prefix")
	status, _ = consoleRefusal("[fe80::1%eth0]:5000", "[fe80::2]", c.consoleFrom)
	assert.Zero(t, status, "a zoned client of its prefix")
}
