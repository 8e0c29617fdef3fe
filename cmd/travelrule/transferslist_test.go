package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/callback/redisstore"
	"github.com/vaspkit/travelrule/journal"
)

// TestTransfersList writes a journal on Redis (an initiation stored, one
// refused, one under another reference prefix, at three times) and lists
// it with "transfers list" and its filters.
func TestTransfersList(t *testing.T) {
	url := startRedisForCLI(t)
	opt, err := redis.ParseURL(url)
	require.NoError(t, err)
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i, tc := range []struct {
		ref     string
		outcome travelrule.CallOutcome
	}{
		{"pay-1", travelrule.CallSucceeded},
		{"pay-2", travelrule.CallNotDone},
		{"refund-3", travelrule.CallSucceeded},
	} {
		at := base.Add(time.Duration(i) * time.Hour)
		j, err := journal.New(redisstore.NewJournal(rdb), journal.WithClock(func() time.Time { return at }))
		require.NoError(t, err)
		info := &travelrule.CallInfo{Op: "InitiateTransfer", CallbackRef: tc.ref}
		c, err := j.StartCall(ctx, info)
		require.NoError(t, err)
		j.EndCall(c, info, &travelrule.CallEnd{Outcome: tc.outcome, TransferID: "tr-" + tc.ref, Attempts: 1})
	}
	env := map[string]string{journalEnv: url}
	for _, tc := range []struct {
		args []string
		want []string // references, in order
	}{
		{nil, []string{"refund-3", "pay-2", "pay-1"}},
		{[]string{"--stage", "initiated"}, []string{"refund-3", "pay-1"}},
		{[]string{"--stage", "none", "--stage", "confirmed"}, []string{"pay-2"}},
		{[]string{"--ref-prefix", "pay-"}, []string{"pay-2", "pay-1"}},
		{[]string{"--since", "2026-11-30T10:00:00Z"}, []string{"refund-3", "pay-2"}},
		{[]string{"--until", "2026-11-30T10:00:00Z"}, []string{"pay-1"}},
		{[]string{"--open", "--ref-prefix", "pay-"}, []string{"pay-1"}},
	} {
		code, out, errOut := runCLI(t, ctx, "", env, append([]string{"transfers", "list", "--json"}, tc.args...)...)
		require.Equal(t, exitOK, code, errOut)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if line == "" {
				continue
			}
			var e map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &e))
			got = append(got, e["ref"].(string))
		}
		assert.Equal(t, tc.want, got, "transfers list %v", tc.args)
	}
	code, out, errOut := runCLI(t, ctx, "", env, "transfers", "list", "--stage", "initiated")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "2026-11-30T11:00:00Z  outbound   initiated         stored by the service  refund-3 / tr-refund-3")
	assert.Contains(t, out, "2 transfer(s).")

	code, _, errOut = runCLI(t, ctx, "", env, "transfers", "list", "--stage", "approved")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "unknown stage")
}

func TestStageNamed(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want journal.Stage
		ok   bool
	}{
		{"none", journal.StageNone, true},
		{"initiated", journal.StageInitiated, true},
		{"inquiry-answered", journal.StageInquiryAnswered, true},
		{"Inquiry answered", journal.StageInquiryAnswered, true},
		{"txid-submitted", journal.StageTxIDSubmitted, true},
		{"txId submitted", journal.StageTxIDSubmitted, true},
		{"CONFIRMED", journal.StageConfirmed, true},
		{"approved", 0, false},
		{"", 0, false},
	} {
		got, err := stageNamed(tc.in)
		if !tc.ok {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestTimeFlag(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-11-30T09:00:00Z", time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), true},
		{"2026-11-30T10:00:00+01:00", time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), true},
		{"24h", now.Add(-24 * time.Hour), true},
		{"90m", now.Add(-90 * time.Minute), true},
		{"-1h", time.Time{}, false},
		{"0s", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"2026-11-30", time.Time{}, false},
	} {
		got, err := timeFlag(tc.in, now)
		if !tc.ok {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.True(t, tc.want.Equal(got), "%s: %v", tc.in, got)
	}
}
