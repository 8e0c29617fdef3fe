package travelrule_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/internal/livedocs"
	"github.com/vaspkit/travelrule/ivms101"
	"github.com/vaspkit/travelrule/travelruletest"
)

// readme returns README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	return string(b)
}

// TestReadmeIsShort: the README is what a newcomer reads in the first
// hour, under 300 lines; the depth is in docs/.
func TestReadmeIsShort(t *testing.T) {
	lines := strings.Count(readme(t), "\n")
	assert.Less(t, lines, 300, "README.md has %d lines: move the depth to a page of docs/", lines)
}

// TestReadmeCommands: the README gives the two commands, and its test
// command is exactly the one .ci/run runs.
func TestReadmeCommands(t *testing.T) {
	ci, err := os.ReadFile(".ci/run")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(ci), "echo \"== tests\"\n")
	require.True(t, ok, ".ci/run has its tests step")
	testCommand, _, _ := strings.Cut(after, "\n")
	require.True(t, strings.HasPrefix(testCommand, "go test "), "the line after the tests step: %q", testCommand)

	_, block, ok := strings.Cut(readme(t), "```sh\n")
	require.True(t, ok, "the README opens with a sh block")
	block, _, _ = strings.Cut(block, "```\n")
	var commands []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		commands = append(commands, strings.TrimSpace(cmd))
	}
	assert.Equal(t, []string{"go run ./examples/quickstart", testCommand}, commands,
		"the README's first block: the quickstart, then the test command of .ci/run")
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks: every relative link of the README and of docs/*.md names
// a file that exists, and a heading of it when it has a #fragment.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	pages = append(pages, "README.md", "CHANGELOG.md")
	for _, page := range pages {
		text, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(text), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, fragment, _ := strings.Cut(link, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
			}
			info, err := os.Stat(target)
			if !assert.NoError(t, err, "%s links %s", page, link) || fragment == "" || info.IsDir() {
				continue
			}
			body, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Contains(t, anchors(string(body)), fragment, "%s links %s: no such heading", page, link)
		}
	}
}

// anchors are the fragments GitHub makes of a Markdown page's headings.
func anchors(page string) []string {
	var out []string
	inCode := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range heading {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f:
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestReadmeFirstIntegrationIsThisCode: the Go blocks of the README's
// "First integration", one after the other, are the body of
// firstIntegration (readme_firstintegration_test.go) between its marker
// lines, which the tests below run: the README shows code that builds and
// works against the SDK as it is.
func TestReadmeFirstIntegrationIsThisCode(t *testing.T) {
	_, section, ok := strings.Cut(readme(t), "\n## First integration\n")
	require.True(t, ok, "the README has a First integration section")
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []string
	for {
		var block string
		if _, section, ok = strings.Cut(section, "```go\n"); !ok {
			break
		}
		block, section, _ = strings.Cut(section, "```\n")
		blocks = append(blocks, block)
	}
	require.NotEmpty(t, blocks)

	src, err := os.ReadFile("readme_firstintegration_test.go")
	require.NoError(t, err)
	_, code, ok := strings.Cut(string(src), "\t// README: begin\n")
	require.True(t, ok)
	code, _, ok = strings.Cut(code, "\t// README: end\n")
	require.True(t, ok)
	var body strings.Builder
	for _, line := range strings.SplitAfter(code, "\n") {
		body.WriteString(strings.TrimPrefix(line, "\t"))
	}
	assert.Equal(t, body.String(), strings.Join(blocks, "\n"),
		"the README's First integration and the body of firstIntegration differ: make them the same")
}

// TestReadmeFirstIntegration runs the README's first integration as the
// originator against the sandbox, and against a server written from the
// live docs alone, which sends only an INQUIRY_RESOLUTION for a
// rejection: the payment is cancelled on a rejection, broadcast on an
// approval, and acted on once, though an approval comes in two messages,
// and though the integrator's store failed the first time.
func TestReadmeFirstIntegration(t *testing.T) {
	tests := []struct {
		name    string
		live    bool // the live docs' server, else the sandbox
		approve bool
		fail    int // the payments store fails this many times first
	}{
		{"sandbox, approved", false, true, 0},
		{"sandbox, rejected", false, false, 0},
		{"sandbox, approved, the store down once", false, true, 1},
		{"sandbox, rejected, the store down once", false, false, 1},
		{"live docs, approved", true, true, 0},
		{"live docs, rejected: an INQUIRY_RESOLUTION alone", true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var baseURL string
			var sandbox *travelruletest.Server
			var live *livedocs.Server
			if tt.live {
				live = livedocs.New(tt.approve)
				defer live.Close()
				baseURL = live.URL
				t.Setenv("TRAVELRULE_API_KEY", livedocs.APIKey)
				t.Setenv("TRAVELRULE_SIGNING_SECRET", livedocs.SigningSecret)
			} else {
				sandbox = travelruletest.NewServer(travelruletest.WithCallbackTimeScale(10*time.Millisecond),
					travelruletest.WithApproval(func(travelrule.TransferRequest) bool { return tt.approve }))
				defer sandbox.Close()
				baseURL = sandbox.URL
				t.Setenv("TRAVELRULE_API_KEY", travelruletest.DefaultAPIKey)
				t.Setenv("TRAVELRULE_SIGNING_SECRET", travelruletest.DefaultSigningSecret)
			}
			mux := http.NewServeMux()
			vasp := httptest.NewServer(mux)
			pay := newPaymentBook()
			pay.fail = tt.fail
			err := firstIntegration(ctx, mux, baseURL, vasp.URL, []byte("our-capability-key-0123456789"),
				pay, "pay-1001", "cust-0042", livedocs.TravelAddress, "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
				newCustomerBook(), screen(true), "cust-42", "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D")
			require.NoError(t, err)
			// Every callback of the transfer answered: its decision acted on.
			if tt.live {
				for _, cb := range live.Wait() {
					assert.Equal(t, http.StatusNoContent, cb.Status, "%s acknowledged", cb.Body)
				}
			} else {
				n := 1 // the rejection's INQUIRY_RESOLUTION: all the live docs promise
				if tt.approve {
					n = 2
				}
				_, err := sandbox.WaitCallbacks(ctx, n)
				require.NoError(t, err)
				sandbox.Close() // and a rejection's TRANSFER_RESOLUTION, if it sends one, is over
			}
			vasp.Close() // the handler's calls have returned
			wantBroadcasts, wantCancels := 0, 1
			if tt.approve {
				wantBroadcasts, wantCancels = 1, 0
			}
			broadcasts, cancels := pay.counts()
			assert.Equal(t, wantBroadcasts, broadcasts, "broadcasts")
			assert.Equal(t, wantCancels, cancels, "cancellations")
			assert.NotEmpty(t, pay.sent["pay-1001"], "the transfer id recorded")
			if !tt.live { // what it sends passes strict validation, and so maps to valid IVMS101
				tr, ok := sandbox.Transfer(pay.sent["pay-1001"])
				require.True(t, ok)
				tr.Request.TravelAddress = travelruletest.KnownTravelAddress
				assert.NoError(t, tr.Request.ValidateStrict())
			}
		})
	}
}

// TestReadmeFirstIntegrationBeneficiary runs the README's first
// integration as the beneficiary's VASP against the sandbox: a travel
// address is made and kept, and an inbound inquiry to it is resolved as
// the screening decides.
func TestReadmeFirstIntegrationBeneficiary(t *testing.T) {
	for _, passes := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "rejected"}[passes], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sandbox := travelruletest.NewServer(travelruletest.WithCallbackTimeScale(10 * time.Millisecond))
			defer sandbox.Close()
			t.Setenv("TRAVELRULE_API_KEY", travelruletest.DefaultAPIKey)
			t.Setenv("TRAVELRULE_SIGNING_SECRET", travelruletest.DefaultSigningSecret)
			mux := http.NewServeMux()
			vasp := httptest.NewServer(mux)
			defer vasp.Close()
			customers := newCustomerBook()
			require.NoError(t, firstIntegration(ctx, mux, sandbox.URL, vasp.URL, []byte("our-capability-key-0123456789"),
				newPaymentBook(), "pay-1002", "cust-0042", "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wv", "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D",
				customers, screen(passes), "cust-42", "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D"))
			assert.NotEmpty(t, customers.addresses["cust-42"], "the customer's travel address kept")

			id, err := sandbox.StartInquiry(ctx, vasp.URL+"/transfers/inquiry/beneficiary-42", &travelrule.TransferRequest{
				Asset: "ETH", Amount: "2",
				Originator:  travelrule.Party{PersonType: "natural", FirstName: "Grace", LastName: "Hopper", DateOfBirth: "1906-12-09", Country: "US", WalletAddress: "0x742d35Cc6634C0532925a3b844Bc454e4438f44e"},
				Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23", WalletAddress: "0x53d284357ec70cE289D6D64134DfAc8E511c8a3D"},
			})
			require.NoError(t, err, "the inquiry acknowledged")
			tr, ok := sandbox.Transfer(id)
			require.True(t, ok)
			assert.Equal(t, map[bool]travelruletest.State{true: travelruletest.StateApproved, false: travelruletest.StateRejected}[passes], tr.State)
			if passes { // the originator part's two, the INQUIRY, and the TRANSFER_CONFIRMATION
				delivered, err := sandbox.WaitCallbacks(ctx, 4)
				require.NoError(t, err)
				kinds := map[travelruletest.CallbackKind]int{}
				for _, d := range delivered {
					assert.True(t, d.Delivered, "%s acknowledged", d.Kind)
					kinds[d.Kind]++
				}
				assert.Equal(t, 1, kinds[travelruletest.KindTransferConfirmation], "%v", kinds)
				vasp.Close() // the handler's calls have returned
				tr, _ = sandbox.Transfer(id)
				assert.NotEmpty(t, tr.TxID)
				assert.Equal(t, tr.TxID, customers.confirmed[id], "the hash recorded")
			}
		})
	}
}

// paymentBook is the originator's bookkeeping in memory: Decide is the
// transaction the README asks for, counting the broadcasts and
// cancellations it queues; its first fail calls fail before recording
// anything, as a store that is down does.
type paymentBook struct {
	mu                  sync.Mutex
	fail                int
	decided             map[string]travelrule.Decision
	sent                map[string]string
	broadcasts, cancels int
}

func newPaymentBook() *paymentBook {
	return &paymentBook{decided: map[string]travelrule.Decision{}, sent: map[string]string{}}
}

func (p *paymentBook) Decide(_ context.Context, id string, d travelrule.Decision) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail > 0 {
		p.fail--
		return errors.New("the payments store is down")
	}
	if _, ok := p.decided[id]; ok {
		return nil
	}
	p.decided[id] = d
	if d == travelrule.Approved {
		p.broadcasts++
	} else {
		p.cancels++
	}
	return nil
}

func (p *paymentBook) Hold(context.Context, string) error { return nil }

func (p *paymentBook) Sent(_ context.Context, paymentID, transferID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent[paymentID] = transferID
}

func (p *paymentBook) counts() (broadcasts, cancels int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.broadcasts, p.cancels
}

// customerBook keeps each customer's travel address and the hashes of
// the inbound transfers confirmed.
type customerBook struct {
	mu        sync.Mutex
	addresses map[string]string
	confirmed map[string]string
}

func newCustomerBook() *customerBook {
	return &customerBook{addresses: map[string]string{}, confirmed: map[string]string{}}
}

func (c *customerBook) SetTravelAddress(_ context.Context, id, ta string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addresses[id] = ta
	return nil
}

func (c *customerBook) Confirmed(_ context.Context, transferID, txID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.confirmed[transferID] = txID
	return nil
}

// screen passes every originator, or none.
type screen bool

func (s screen) Passes(context.Context, travelrule.Party, *ivms101.Payload) bool { return bool(s) }
