package travelruletest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// The console in a real browser: Debian's Chromium, driven by chromedp.
// Every wait is on the page's DOM (chromedp.Poll on each mutation), never
// on time.

// requireExternal is the variable that turns a skip for a missing program
// into a failure; .ci/run sets it after installing them.
const requireExternal = "TRAVELRULE_REQUIRE_EXTERNAL"

// artifactsDir is where the browser tests put their screenshots: the
// directory TRAVELRULE_ARTIFACTS names (.ci/run keeps it), else the test's
// temporary directory.
func artifactsDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("TRAVELRULE_ARTIFACTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	return t.TempDir()
}

// lookChromium returns the path of Chromium, or skips the test naming the
// Debian package that installs it (fails instead when requireExternal is
// set).
func lookChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "this test drives Chromium, which is not installed: install the Debian package chromium (apt-get install chromium); .ci/run does"
	if os.Getenv(requireExternal) != "" {
		t.Fatal(msg + " (" + requireExternal + " is set, so this is a failure)")
	}
	t.Skip(msg)
	return ""
}

// newBrowser starts a headless Chromium for the test, with a fresh
// profile, and returns a context of one tab. The flags keep it off the
// network: this machine's is closed, and the console needs none.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(lookChromium(t)),
		chromedp.NoSandbox, // the tests may run as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	return bctx
}

// newTab opens another tab of the browser of ctx. A page is loaded once
// in each tab: a second navigation in one tab can leave chromedp waiting
// in the execution context of the page before ("Cannot find context with
// specified id").
func newTab(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	return tab
}

// waitFor waits until the JavaScript expression is truthy, re-evaluating
// it on each change of the page's DOM.
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "waiting for %s: %s", what, expr)
}

// eval evaluates the JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, "evaluating %s", expr)
	return v
}

// do runs the steps in the page.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// click clicks the element sel names as it is at that moment: the live
// parts of the page are replaced as the sandbox changes, so a node found
// before the click may be gone by then ("Could not find node with given
// id"). The click is a DOM click, which the page's script handles as a
// mouse click.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	ok := eval[bool](t, ctx, fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el) return false; el.click(); return true; })()`, sel))
	require.True(t, ok, "no element %s to click", sel)
}

// screenshot saves a screenshot (PNG: quality 100) of the whole page as name in the
// artifacts directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(artifactsDir(t), name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}

// flakyReceiver is an integrator's callback endpoint that answers the
// first callback to each path 500 and every later one 204, and counts
// them: a transfer's INQUIRY_RESOLUTION fails once and is retried, its
// TRANSFER_RESOLUTION goes through.
type flakyReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newFlakyReceiver(t *testing.T) *flakyReceiver {
	fr := &flakyReceiver{hits: make(map[string]int)}
	fr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fr.mu.Lock()
		fr.hits[r.URL.Path]++
		n := fr.hits[r.URL.Path]
		fr.mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(fr.Close)
	return fr
}

// browserTransfer is a transfer to initiate, its callback at path of the
// receiver.
func browserTransfer(callback string) *travelrule.TransferRequest {
	return &travelrule.TransferRequest{
		Asset: "ETH", Amount: "1.25", Callback: callback + "?tag=cap-SECRET-TAG",
		Originator: travelrule.Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace",
			DateOfBirth: "1815-12-10", Country: "GB"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing",
			DateOfBirth: "1912-06-23", Country: "GB", WalletAddress: "0x52908400098527886E0F7030069857D2E4169EE7"},
	}
}

// TestConsoleInBrowser goes through a whole flow in the console, with
// the page loaded once: a transfer initiated with the SDK appears without
// a reload; opened, it shows its callbacks, the first attempt of each
// answered 500 and its retry 204; with the decision set to none on the
// page, a second transfer waits, the Approve button approves it, and the
// callbacks that follow show. Screenshots go to the artifacts.
func TestConsoleInBrowser(t *testing.T) {
	ctx := newBrowser(t)
	recv := newFlakyReceiver(t)
	srv := travelruletest.NewServer(travelruletest.WithConsole(),
		travelruletest.WithCallbackRetry(3, 20*time.Millisecond, 20*time.Millisecond))
	t.Cleanup(srv.Close)
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	require.NoError(t, err)

	do(t, ctx, chromedp.Navigate(srv.ConsoleURL()))
	waitFor(t, ctx, "the event stream", `document.getElementById("live").textContent === "Live"`)
	weight := eval[[]float64](t, ctx, `[performance.getEntriesByType("navigation")[0].decodedBodySize,
		...["console.css", "console.js"].map(f => performance.getEntriesByType("resource").find(e => e.name.endsWith("/console/" + f)).decodedBodySize)]`)
	t.Logf("page weight, empty sandbox: %.0f bytes (HTML %.0f, CSS %.0f, JS %.0f)", weight[0]+weight[1]+weight[2], weight[0], weight[1], weight[2])
	// A mark that a reload would wipe, and the time each row appears.
	eval[chromedp.Void](t, ctx, `window.loadedOnce = true;
		window.appeared = {};
		new MutationObserver(() => {
			for (const tr of document.querySelectorAll("tr.row")) {
				if (!(tr.id in window.appeared)) window.appeared[tr.id] = Date.now();
			}
		}).observe(document.body, {childList: true, subtree: true}); null`)

	// 1. A transfer initiated with the SDK appears.
	start := time.Now()
	res, err := client.InitiateTransfer(context.Background(), browserTransfer(recv.URL+"/cb/first"))
	require.NoError(t, err)
	answered := time.Now()
	first := res.TransferID
	waitFor(t, ctx, "the first transfer's row", fmt.Sprintf(`document.getElementById("row-%s")`, first))
	seenAt := eval[float64](t, ctx, fmt.Sprintf(`window.appeared["row-%s"]`, first))
	seen := time.UnixMilli(int64(seenAt))
	t.Logf("initiation to appearance on the page: %v from the call, %v from its answer", seen.Sub(start).Round(time.Millisecond), seen.Sub(answered).Round(time.Millisecond))
	rowText := eval[string](t, ctx, fmt.Sprintf(`document.getElementById("row-%s").innerText`, first))
	assert.Contains(t, rowText, "ETH")
	assert.Contains(t, rowText, "1.25")
	assert.Contains(t, rowText, "OPEN_VASP")
	assert.Contains(t, rowText, "[redacted] → [redacted]")
	assert.NotContains(t, rowText, "Lovelace", "personal data shows only when revealed")

	// 2. Opened, it shows its deliveries: each callback's failed first
	// attempt and its retry.
	_, err = srv.WaitCallbacks(ctx, 2)
	require.NoError(t, err)
	click(t, ctx, fmt.Sprintf(`#row-%s a`, first))
	waitFor(t, ctx, "the first transfer's timeline", fmt.Sprintf(
		`document.getElementById("detail-h").textContent.includes(%q) &&
		 document.querySelector(".timeline").innerText.includes("TRANSFER_RESOLUTION callback delivered")`, first))
	timeline := eval[string](t, ctx, `document.querySelector(".timeline").innerText`)
	assert.Contains(t, timeline, "INQUIRY_RESOLUTION callback delivered (announces approved)")
	assert.Contains(t, timeline, "TRANSFER_RESOLUTION callback delivered (announces completed)")
	assert.Contains(t, timeline, recv.URL+"/cb/first", "the callback URL, without its query")
	assert.NotContains(t, timeline, "cap-SECRET-TAG")
	assert.Contains(t, timeline, "x-data-integrity")
	attempts := eval[[][]string](t, ctx, `[...document.querySelectorAll(".timeline .attempts tbody tr")].map(tr => [tr.className, tr.cells[2].innerText, tr.cells[3].innerText])`)
	require.Len(t, attempts, 3, "the INQUIRY_RESOLUTION's two attempts, the TRANSFER_RESOLUTION's one")
	for i, want := range [][]string{{"bad", "500"}, {"ok", "204"}, {"ok", "204"}} {
		assert.Equal(t, want, attempts[i][:2], "attempt %d", i)
		assert.Contains(t, attempts[i][2], " ms", "attempt %d shows its latency", i)
	}
	assert.Contains(t, eval[string](t, ctx, `location.search`), "transfer="+first)
	screenshot(t, ctx, "console-transfer.png")

	// 3. The decision set on the page leaves the next transfer waiting
	// for the counterparty; Approve decides it, and its callbacks follow.
	eval[chromedp.Void](t, ctx, `document.getElementById("decision").value = "none"; null`)
	click(t, ctx, "#set-decision")
	waitFor(t, ctx, "the decision", `document.getElementById("decision-now").textContent === "none"`)
	// Faults set from elsewhere show in the form, not only in the table.
	srv.SetFaults(travelruletest.Fault{Kind: travelruletest.FaultRateLimit, Rate: 1, Times: 1, Ops: travelruletest.OpSubmitTxID})
	waitFor(t, ctx, "the faults set from Go", `document.getElementById("fault-specs").value === "rate-limit:times=1,ops=submit-txid"`)
	// The keyboard's place survives the update a new transfer brings.
	eval[chromedp.Void](t, ctx, fmt.Sprintf(`document.getElementById("open-%s").focus(); null`, first))
	res, err = client.InitiateTransfer(context.Background(), browserTransfer(recv.URL+"/cb/second"))
	require.NoError(t, err)
	second := res.TransferID
	waitFor(t, ctx, "the second transfer's row", fmt.Sprintf(`document.getElementById("row-%s")`, second))
	assert.Equal(t, "open-"+first, eval[string](t, ctx, `document.activeElement.id`), "the focus stays on its link")
	assert.Contains(t, eval[string](t, ctx, fmt.Sprintf(`document.getElementById("row-%s").innerText`, second)), "awaits the counterparty's decision")
	click(t, ctx, fmt.Sprintf(`#row-%s a`, second))
	waitFor(t, ctx, "the Approve button", fmt.Sprintf(
		`document.getElementById("detail-h").textContent.includes(%q) && document.getElementById("approve")`, second))
	tr, _ := srv.Transfer(second)
	assert.Equal(t, travelruletest.StateReceived, tr.State, "no decision before the button")
	click(t, ctx, "#approve")
	waitFor(t, ctx, "the callbacks that follow the approval",
		`document.querySelector(".timeline").innerText.includes("TRANSFER_RESOLUTION callback delivered") && !document.getElementById("approve")`)
	timeline = eval[string](t, ctx, `document.querySelector(".timeline").innerText`)
	assert.Contains(t, timeline, "Decision approved by the console's button")
	assert.Contains(t, timeline, "INQUIRY_RESOLUTION callback delivered (announces approved)")
	assert.Contains(t, eval[string](t, ctx, `document.getElementById("notice").textContent`), "approved")
	tr, _ = srv.Transfer(second)
	assert.Equal(t, travelruletest.StateCompleted, tr.State)
	recv.mu.Lock()
	assert.Equal(t, 3, recv.hits["/cb/second"], "the receiver got both callbacks, the first on its second attempt")
	recv.mu.Unlock()

	assert.True(t, eval[bool](t, ctx, `window.loadedOnce === true`), "the page was never reloaded")
	screenshot(t, ctx, "console.png")
	do(t, ctx, chromedp.EmulateViewport(390, 844))
	screenshot(t, ctx, "console-phone.png")
	wide := eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth`)
	assert.False(t, wide, "at phone width nothing is wider than the screen")
}

// hostile are party names an attacker could send: markup that would run
// script if the console put it into the page as HTML.
var hostile = []string{
	`<script>window.pwned = 1</script>`,
	`"><img src=x onerror="window.pwned = 2">`,
}

// TestConsoleEscapesInBrowser: party names that are markup show as text,
// revealed, both in the page as served and in the parts the script swaps
// in, and no script of theirs runs.
func TestConsoleEscapesInBrowser(t *testing.T) {
	ctx := newBrowser(t)
	srv := travelruletest.NewServer(travelruletest.WithConsole(), travelruletest.WithoutCallbacks())
	t.Cleanup(srv.Close)
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	require.NoError(t, err)
	req := browserTransfer("https://vasp.example/cb")
	req.Originator.FirstName, req.Originator.LastName = hostile[0], hostile[1]

	check := func(t *testing.T, id string) {
		t.Helper()
		assert.True(t, eval[bool](t, ctx, `window.pwned === undefined`), "no script of the name ran")
		assert.Equal(t, 0, eval[int](t, ctx, `document.querySelectorAll("img").length`), "no element of the name was made")
		assert.Equal(t, 1, eval[int](t, ctx, `document.scripts.length`), "the console's own script only")
		row := eval[string](t, ctx, fmt.Sprintf(`document.getElementById("row-%s").querySelector(".parties").textContent`, id))
		assert.Equal(t, hostile[0]+" "+hostile[1]+" → Alan Turing", row)
	}

	// Swapped in by the script: the page is open before the transfer.
	do(t, ctx, chromedp.Navigate(srv.ConsoleURL()+"?reveal=1"))
	waitFor(t, ctx, "the event stream", `document.getElementById("live").textContent === "Live"`)
	res, err := client.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	id := res.TransferID
	waitFor(t, ctx, "the row", fmt.Sprintf(`document.getElementById("row-%s")`, id))
	click(t, ctx, fmt.Sprintf(`#row-%s a`, id))
	waitFor(t, ctx, "the parties", `document.querySelector(".detail dl.facts dd") && document.querySelectorAll(".detail h4").length === 2`)
	check(t, id)
	fields := eval[[]string](t, ctx, `[...document.querySelectorAll(".detail h4 + dl.facts")].slice(0, 1).flatMap(dl => [...dl.querySelectorAll("dd")].map(dd => dd.textContent))`)
	assert.Contains(t, fields, hostile[0])
	assert.Contains(t, fields, hostile[1])

	// As served.
	ctx = newTab(t, ctx)
	do(t, ctx, chromedp.Navigate(srv.ConsoleURL()+"?reveal=1&transfer="+id))
	waitFor(t, ctx, "the page", fmt.Sprintf(`document.getElementById("row-%s")`, id))
	check(t, id)
}

// TestConsoleRefusesOtherOrigins: a page of another origin (another port
// of the same host: same site, other origin) that posts the console's
// Approve form, or fetches it, decides nothing; the console's own button
// then does.
func TestConsoleRefusesOtherOrigins(t *testing.T) {
	ctx := newBrowser(t)
	srv := travelruletest.NewServer(travelruletest.WithConsole(), travelruletest.WithoutCallbacks())
	t.Cleanup(srv.Close)
	srv.SetDecision(travelruletest.DecisionNone)
	client, err := travelrule.NewClient(srv.URL, travelrule.WithAPIKey(travelruletest.DefaultAPIKey))
	require.NoError(t, err)
	res, err := client.InitiateTransfer(context.Background(), browserTransfer("https://vasp.example/cb"))
	require.NoError(t, err)
	target := srv.ConsoleURL() + "console/transfers/" + res.TransferID + "/decision"
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>another origin</title>
<form method="post" action=%q><input type="hidden" name="decision" value="approve"><button id="go">go</button></form>
<button id="fetch" onclick='fetch(%q, {method: "POST", mode: "no-cors", body: new URLSearchParams({decision: "approve"})}).finally(() => { document.body.dataset.fetched = "1"; })'>fetch</button>`, target, target)
	}))
	t.Cleanup(attacker.Close)

	do(t, ctx, chromedp.Navigate(attacker.URL))
	do(t, ctx, chromedp.Click(`#fetch`))
	waitFor(t, ctx, "the fetch to end", `document.body.dataset.fetched === "1"`)
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(`#go`))
	require.NoError(t, err)
	assert.Equal(t, int64(http.StatusForbidden), resp.Status, "the form's post is refused")
	tr, _ := srv.Transfer(res.TransferID)
	assert.Equal(t, travelruletest.StateReceived, tr.State, "a page of another origin decided nothing")

	ctx = newTab(t, ctx)
	do(t, ctx, chromedp.Navigate(srv.ConsoleURL()+"?transfer="+res.TransferID))
	waitFor(t, ctx, "the Approve button", `document.getElementById("approve")`)
	click(t, ctx, "#approve")
	waitFor(t, ctx, "the decision", `document.querySelector(".timeline").innerText.includes("Decision approved by the console's button")`)
}
