package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
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

// startRedisForCLI starts a throw-away redis-server on a free loopback
// port, with the extra arguments, and returns its URL; it skips (or
// fails, in CI) without one. It keeps a save schedule that no test
// reaches (an hour): the journal's store refuses a Redis without
// persistence.
func startRedisForCLI(t *testing.T, args ...string) string {
	bin := lookTool(t, "redis-server", "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "3600 1", "--appendonly", "no", "--dir", t.TempDir()}, args...)...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	defer rdb.Close()
	deadline := time.Now().Add(20 * time.Second)
	for rdb.Ping(context.Background()).Err() != nil {
		require.True(t, time.Now().Before(deadline), "redis-server did not answer")
		time.Sleep(20 * time.Millisecond) // polling the server until it answers
	}
	return fmt.Sprintf("redis://127.0.0.1:%d/0", port)
}

// TestTransfersCommands writes a journal on Redis as a service's
// replicas would (an initiation whose outcome is unknown, one stored and
// never resolved, an inbound inquiry never answered) and reads it with
// "transfers stuck" and "transfers show": every rule is named, and no
// personal value is printed.
func TestTransfersCommands(t *testing.T) {
	url := startRedisForCLI(t)
	opt, err := redis.ParseURL(url)
	require.NoError(t, err)
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	past := time.Now().Add(-30 * time.Hour)
	j, err := journal.New(redisstore.NewJournal(rdb), journal.WithClock(func() time.Time { return past }))
	require.NoError(t, err)
	ctx := context.Background()

	// An initiation recorded before sending, whose process died: no outcome.
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-died", Digest: sha256.Sum256([]byte("x"))})
	require.NoError(t, err)
	// A stored initiation that no decision followed.
	sctx, err := j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-stored"})
	require.NoError(t, err)
	j.EndCall(sctx, &travelrule.CallInfo{Op: "InitiateTransfer"}, &travelrule.CallEnd{Outcome: travelrule.CallSucceeded, TransferID: "tr-stored-1", Attempts: 1})
	// An inbound inquiry never answered; its body names persons.
	inquiry, err := travelrule.ParseCallback([]byte(`{"asset":"BTC","amount":"1","callback":"https://trp.example/transfers/inquiryResolution?q=tr-in-9","IVMS101":{"originator":{"originatorPersons":[{"naturalPerson":{"name":{"nameIdentifier":[{"primaryIdentifier":"Quenneville","secondaryIdentifier":"Perpetua"}]}}}]}}}`))
	require.NoError(t, err)
	require.NoError(t, j.Delivered(ctx, &callback.Delivery{Authenticated: true, ID: "body:1", Callback: inquiry}))

	env := map[string]string{journalEnv: url}
	code, out, errOut := runCLI(t, ctx, "", env, "transfers", "stuck", "--exit-code")
	assert.Equal(t, exitFailed, code, errOut)
	for _, want := range []string{string(journal.RuleOutcomeUnknown), string(journal.RuleNoResolution), string(journal.RuleInquiryUnanswered), "pay-died", "tr-stored-1", "tr-in-9", "3 transfer(s) need a person"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "Perpetua")
	assert.NotContains(t, out, "Quenneville")

	code, out, _ = runCLI(t, ctx, "", env, "transfers", "stuck", "--json", "--resolution", "48h", "--inquiry", "48h")
	assert.Equal(t, exitOK, code, "without --exit-code, finding transfers is no failure")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1, "the longer thresholds leave only the unknown outcome")
	var found map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &found))
	assert.Equal(t, string(journal.RuleOutcomeUnknown), found["rule"])

	code, out, errOut = runCLI(t, ctx, "", env, "transfers", "show", "tr-stored-1")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Reference:   pay-stored")
	assert.Contains(t, out, "Initiation:  stored by the service")
	assert.Contains(t, out, "InitiateTransfer recorded before sending")

	code, _, errOut = runCLI(t, ctx, "", env, "transfers", "show", "no-such-ref")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut, "holds no transfer")
}

// TestTransfersSettle: an entry left "sent, outcome unknown" by a process
// that died blocks a resend, which "transfers show" tells from a refusal
// by the service; "transfers settle" records what the operator learnt,
// and the resend is let through.
func TestTransfersSettle(t *testing.T) {
	url := startRedisForCLI(t)
	opt, err := redis.ParseURL(url)
	require.NoError(t, err)
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	hourAgo := time.Now().Add(-time.Hour)
	died, err := journal.New(redisstore.NewJournal(rdb), journal.WithClock(func() time.Time { return hourAgo }))
	require.NoError(t, err)
	j, err := journal.New(redisstore.NewJournal(rdb))
	require.NoError(t, err)
	ctx := context.Background()
	_, err = died.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-killed"})
	require.NoError(t, err)
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-killed"})
	require.ErrorIs(t, err, journal.ErrRefInUse)
	env := map[string]string{journalEnv: url}

	code, out, errOut := runCLI(t, ctx, "", env, "transfers", "show", "pay-killed")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Initiation:  sent, outcome unknown")
	assert.Contains(t, out, "not sent: the journal refused it (ErrRefInUse")
	assert.NotContains(t, out, "the service refused it")

	for _, args := range [][]string{
		{"--reason", "x", "pay-killed"},
		{"--not-stored", "--stored", "tr-1", "--reason", "x", "pay-killed"},
		{"--not-stored", "pay-killed"},
		{"--not-stored", "--reason", "two\nlines", "pay-killed"},
		{"--not-stored", "--reason", "x"},
	} {
		code, _, errOut = runCLI(t, ctx, "", env, append([]string{"transfers", "settle"}, args...)...)
		assert.Equal(t, exitUsage, code, "%q: %s", args, errOut)
	}

	code, out, errOut = runCLI(t, ctx, "", env, "transfers", "settle", "--not-stored", "--reason", "support ticket 4711", "pay-killed")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Initiation:  not stored")
	assert.Contains(t, out, "settled by an operator: not stored, the reference may be used again (reason: support ticket 4711)")
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-killed"})
	assert.NoError(t, err, "the resend is let through")

	code, _, errOut = runCLI(t, ctx, "", env, "transfers", "settle", "--not-stored", "--reason", "again", "no-such-ref")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut, "no initiation of the entry has an unknown outcome")
}

// TestTransfersCommandsStore checks the store's URL: required, from the
// environment only, and never echoed with its password.
func TestTransfersCommandsStore(t *testing.T) {
	ctx := context.Background()
	code, _, errOut := runCLI(t, ctx, "", nil, "transfers", "stuck")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, journalEnv)

	code, _, errOut = runCLI(t, ctx, "", map[string]string{journalEnv: "mysql://u:hunter2-secret@h/db"}, "transfers", "stuck")
	assert.Equal(t, exitUsage, code)
	assert.NotContains(t, errOut, "hunter2-secret")

	code, _, errOut = runCLI(t, ctx, "", map[string]string{journalEnv: "redis://u:hunter2-secret@h:notaport/x"}, "transfers", "stuck")
	assert.Equal(t, exitUsage, code)
	assert.NotContains(t, errOut, "hunter2-secret")

	code, _, _ = runCLI(t, ctx, "", nil, "transfers", "stuck", "--txid", "-1s")
	assert.Equal(t, exitUsage, code)
	code, _, _ = runCLI(t, ctx, "", nil, "transfers", "frobnicate")
	assert.Equal(t, exitUsage, code)
}

// TestTransfersCommandsStoreState: an unreachable store is a failure (1),
// not a usage error, as is a Redis without persistence, whose journal a
// restart would have emptied; a prefix that holds no journal is said.
func TestTransfersCommandsStoreState(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	l.Close()
	code, _, errOut := runCLI(t, ctx, "", map[string]string{journalEnv: "redis://u:hunter2-secret@" + closed + "/0"}, "transfers", "stuck")
	assert.Equal(t, exitFailed, code, errOut)
	assert.NotContains(t, errOut, "hunter2-secret")

	forgetful := startRedisForCLI(t, "--save", "")
	code, _, errOut = runCLI(t, ctx, "", map[string]string{journalEnv: forgetful}, "transfers", "stuck", "--exit-code")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut, "keeps no persistence")
	assert.Contains(t, errOut, "set appendonly yes, or a save schedule")

	url := startRedisForCLI(t)
	code, _, errOut = runCLI(t, ctx, "", map[string]string{journalEnv: url}, "transfers", "stuck", "--redis-prefix", "mistyped:", "--exit-code")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, errOut, "no journal under the prefix")
}

// TestTransfersPrintNothingATerminalActsOn: a reason with a bidi override
// or a line separator is refused, and a record with an ESC sequence that
// reached the store some other way (a hostile store, another tool) is
// printed escaped.
func TestTransfersPrintNothingATerminalActsOn(t *testing.T) {
	url := startRedisForCLI(t)
	opt, err := redis.ParseURL(url)
	require.NoError(t, err)
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	store := redisstore.NewJournal(rdb)
	j, err := journal.New(store)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-bidi"}) // a reason is checked first
	require.NoError(t, err)
	env := map[string]string{journalEnv: url}
	reason := "ticket \u202e1174 teb\u2028Initiation:  stored by the service"
	code, out, errOut := runCLI(t, ctx, "", env, "transfers", "settle", "--not-stored", "--reason", reason, "pay-bidi")
	assert.Equal(t, exitUsage, code, errOut)
	assert.NotContains(t, out, "\u202e", "a bidi override reached the terminal")
	assert.NotContains(t, out, "\u2028", "a line separator reached the terminal")

	// A record written straight into the store, as a hostile store could.
	_, err = j.StartCall(ctx, &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: "pay-esc"})
	require.NoError(t, err)
	at := time.Now().UTC().Format(time.RFC3339Nano)
	_, err = store.Write(ctx, journal.Step{Key: "o:pay-esc", ID: "settle:evil", Record: []byte(`{"kind":"settled","at":"` + at + `","settled":"not-stored","reason":"\u001b[2J\u001b]0;pwned\u0007ok"}`)})
	require.NoError(t, err)
	code, out, errOut = runCLI(t, ctx, "", env, "transfers", "show", "pay-esc")
	assert.Equal(t, exitOK, code, errOut)
	assert.False(t, strings.ContainsRune(out, 0x1b), "an ESC sequence from the store reached the terminal")
	assert.Contains(t, out, `\u001b[2J\u001b]0;pwned\u0007ok`)
}
