package travelrule

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/oauth2"
)

// TestTokenFaultType names each failure of a token fetch with a fixed
// word: the endpoint's refusal, the source's own fault, or what failed
// below HTTP on the way to the endpoint.
func TestTokenFaultType(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"OAuth2 refusal", &oauth2.RetrieveError{ErrorCode: "invalid_client"}, "token_refused"},
		{"login refused", &LoginError{StatusCode: 401}, "token_refused"},
		{"login refused in a 200", &LoginError{StatusCode: 200, Refusal: KeyInactive}, "token_refused"},
		{"login answer not understood", &LoginError{StatusCode: 200}, "token_answer_invalid"},
		{"login unreachable", &LoginError{Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, "connection_refused"},
		{"login timed out", &LoginError{Err: context.DeadlineExceeded}, "timeout"},
		{"no token", errNoToken, "token_source"},
		{"panicked", fmt.Errorf("%w: x", errSourcePanicked), "token_source"},
		{"endpoint unreachable", fmt.Errorf("oauth2: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), "connection_refused"},
		{"a source's own error", errors.New("vault sealed"), "token_source"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tokenFaultType(tt.err))
		})
	}
}
