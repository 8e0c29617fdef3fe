package travelruletest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPause is the table of the one wait of the server, which holds
// requests for latency faults and callbacks between their attempts: it
// passes, or ends early when its context ends or the server closes.
func TestPause(t *testing.T) {
	for _, tt := range []struct {
		name         string
		d            time.Duration
		ctxEnded     bool
		serverClosed bool
		want         bool
	}{
		{name: "passes", d: time.Nanosecond, want: true},
		{name: "no wait passes", d: 0, want: true},
		{name: "negative wait passes", d: -time.Second, want: true},
		{name: "context ended", d: time.Hour, ctxEnded: true},
		{name: "no wait, context ended", d: 0, ctxEnded: true},
		{name: "server closed", d: time.Hour, serverClosed: true},
		{name: "no wait, server closed", d: 0, serverClosed: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(WithoutCallbacks())
			defer s.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.ctxEnded {
				cancel()
			}
			if tt.serverClosed {
				s.Close()
			}
			done := make(chan bool, 1)
			go func() { done <- s.pause(ctx, tt.d) }()
			select {
			case got := <-done:
				assert.Equal(t, tt.want, got)
			case <-time.After(time.Minute):
				require.FailNow(t, "pause did not end")
			}
		})
	}
}

// TestPauseEndsWhenTheServerCloses: a wait under way ends when the server
// closes, though its context goes on.
func TestPauseEndsWhenTheServerCloses(t *testing.T) {
	s := NewServer(WithoutCallbacks())
	done := make(chan bool, 1)
	go func() { done <- s.pause(context.Background(), time.Hour) }()
	s.Close()
	select {
	case got := <-done:
		assert.False(t, got)
	case <-time.After(time.Minute):
		require.FailNow(t, "pause did not end at Close")
	}
}
