//go:build unix

package redisstore_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/journal"
)

// The environment of the child process of TestJournalSurvivesKilledProcess.
const (
	childRedis   = "TRAVELRULE_JOURNAL_CHILD_REDIS"
	childService = "TRAVELRULE_JOURNAL_CHILD_SERVICE"
	childPrefix  = "TRAVELRULE_JOURNAL_CHILD_PREFIX"
)

var (
	killCapKey   = []byte("kill-test-capability-key-0123456")
	killSecret   = "kill-test-signing-secret-0123456"
	killCallback = "https://vasp.example/travelrule/cb"
)

// TestJournalChildInitiates is the child process of
// TestJournalSurvivesKilledProcess: a service that initiates one transfer
// through a client with a journal on Redis, and is killed while it waits
// for the answer. Run alone, it skips.
func TestJournalChildInitiates(t *testing.T) {
	if os.Getenv(childRedis) == "" {
		t.Skip("the child process of TestJournalSurvivesKilledProcess")
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(childRedis), ContextTimeoutEnabled: true})
	j, err := journal.New(redisstore.NewJournal(rdb, redisstore.WithPrefix(os.Getenv(childPrefix))))
	require.NoError(t, err)
	c, err := travelrule.NewClient(os.Getenv(childService), travelrule.WithTokenSource(travelrule.StaticToken("kill-test-bearer")),
		travelrule.WithObserver(j))
	require.NoError(t, err)
	cb, err := travelrule.NewCallbackURL(killCallback, "pay-killed-1", killCapKey)
	require.NoError(t, err)
	_, err = c.InitiateTransfer(context.Background(), &travelrule.TransferRequest{
		TravelAddress: "ta4n7WArAHPkQgg3fABMpJiys8AsypD8AqdoXfKBwjH9t5QQbG2uqW9CmQCS3M4GuwxcS6QNdWFUX6nD3tc5bajpNb3svbn87xxy9rCcYNYHN",
		Asset:         "ETH", Amount: "1234.5678", Callback: cb, // four digits before the point: no timestamp (":52.518…") holds it
		Originator:  travelrule.Party{PersonType: "natural", FirstName: "Evangelina", LastName: "Throckmorton", DateOfBirth: "1971-06-05"},
		Beneficiary: travelrule.Party{PersonType: "natural", FirstName: "Bartholomew", LastName: "Nakagawa-Reyes", DateOfBirth: "1988-12-24"},
	})
	t.Fatalf("the initiation returned (%v): the parent was to kill this process first", err)
}

// TestJournalSurvivesKilledProcess kills (SIGKILL) a process after its
// initiation was written to the service and before the answer was read:
// the journal on Redis holds an entry that says "sent, outcome unknown",
// reported stuck at its threshold, and the service's later signed
// TRANSFER_RESOLUTION, received by another process's handler, reconciles
// it to its transfer id.
func TestJournalSurvivesKilledProcess(t *testing.T) {
	r := startRedis(t)
	prefix := "kill-" + uniqueJournal("") + ":"

	// The service reads each initiation whole, says so, and never answers.
	written := make(chan struct{}, 1)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		select {
		case written <- struct{}{}:
		default:
		}
		<-req.Context().Done() // until the client's connection goes
	}))
	t.Cleanup(svc.Close)

	child := exec.Command(os.Args[0], "-test.run=^TestJournalChildInitiates$", "-test.count=1")
	child.Env = append(os.Environ(), childRedis+"="+r.Addr, childService+"="+svc.URL, childPrefix+"="+prefix)
	child.SysProcAttr = dieWithParent()
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	require.NoError(t, child.Start())
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	select {
	case <-written:
	case err := <-exited:
		t.Fatalf("the child ended before its request was written (%v):\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the child's request never came")
	}
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	<-exited

	// Another process: a journal on the same Redis, with a clock.
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	now := time.Now()
	j, err := journal.New(redisstore.NewJournal(rdb, redisstore.WithPrefix(prefix)), journal.WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	ctx := context.Background()
	e, err := j.Entry(ctx, "pay-killed-1")
	require.NoError(t, err)
	require.NotNil(t, e, "the killed process left an entry")
	assert.Equal(t, journal.InitiationSent, e.Initiation)

	stuck, err := j.Stuck(ctx, journal.Thresholds{OutcomeUnknown: time.Hour})
	require.NoError(t, err)
	assert.Empty(t, stuck, "not before its threshold")
	now = e.SentAt.Add(time.Hour)
	stuck, err = j.Stuck(ctx, journal.Thresholds{OutcomeUnknown: time.Hour})
	require.NoError(t, err)
	require.Len(t, stuck, 1, "at its threshold")
	assert.Equal(t, journal.RuleOutcomeUnknown, stuck[0].Rule)

	// The service's TRANSFER_RESOLUTION, signed as live-service.md says,
	// reaches this process's handler at the transfer's callback URL.
	verifier, err := callback.NewDataIntegrityVerifier(killSecret)
	require.NoError(t, err)
	h := callback.NewHandler(func(context.Context, *travelrule.Callback) error { return nil },
		callback.WithVerifier(verifier), callback.WithCapabilityKey(killCapKey), callback.WithObserver(j))
	cbURL, err := travelrule.NewCallbackURL(killCallback, "pay-killed-1", killCapKey)
	require.NoError(t, err)
	body := fmt.Sprintf(`{"transferId":"019ac452-8660-7061-9b93-8d72eaa11a89","status":"APPROVED","statusComment":"ok","callback":%q}`, cbURL)
	m := hmac.New(sha512.New, []byte(killSecret))
	m.Write([]byte(base64.StdEncoding.EncodeToString([]byte(body))))
	req := httptest.NewRequest(http.MethodPost, cbURL, strings.NewReader(body))
	req.Header.Set("x-data-integrity", hex.EncodeToString(m.Sum(nil)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNoContent, rec.Code)

	e, err = j.Entry(ctx, "019ac452-8660-7061-9b93-8d72eaa11a89")
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, "pay-killed-1", e.Ref)
	assert.Equal(t, journal.InitiationStored, e.Initiation)
	assert.True(t, e.Reconciled)
	assert.Equal(t, journal.StageResolved, e.Stage)
	stuck, err = j.Stuck(ctx, journal.Thresholds{OutcomeUnknown: time.Hour})
	require.NoError(t, err)
	assert.Empty(t, stuck, "reconciled, and resolved")

	// Nothing personal reached Redis.
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	var dump strings.Builder
	for _, k := range keys {
		switch typ, _ := rdb.Type(ctx, k).Result(); typ {
		case "hash":
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				dump.WriteString(f + v)
			}
		case "string":
			dump.WriteString(rdb.Get(ctx, k).Val())
		case "zset":
			dump.WriteString(strings.Join(rdb.ZRange(ctx, k, 0, -1).Val(), " "))
		}
	}
	for _, v := range []string{"Evangelina", "Throckmorton", "1971-06-05", "Bartholomew", "Nakagawa-Reyes", "1988-12-24", "kill-test-bearer", "1234.5678"} {
		assert.NotContains(t, dump.String(), v)
	}
}
