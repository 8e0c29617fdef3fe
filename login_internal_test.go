package travelrule

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKeySourceShowsNoKey: the API key's holder, printed or logged by
// mistake (a debugger's dump, a %+v of the options), shows no key.
func TestKeySourceShowsNoKey(t *testing.T) {
	const key = "trp_live_key_internal_0123"
	src := &apiKeySource{key: secret(key), url: "https://trp.example.com/auth/token"}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "src", src, "key", src.key)
	for _, shown := range []string{fmt.Sprintf("%v %+v %#v %s %q", src, src, src, src, src), fmt.Sprintf("%v %+v %#v %s %q %x", src.key, src.key, src.key, src.key, src.key, src.key), logs.String()} {
		assert.NotContains(t, shown, key)
		assert.NotContains(t, shown, fmt.Sprintf("%x", key))
	}
	assert.Contains(t, fmt.Sprint(src), "https://trp.example.com/auth/token")
}

func TestHoldsKeyPart(t *testing.T) {
	const key = "trp_live_key_0123456789abcdef"
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"API key " + key + " is inactive", true},
		{"API key trp_live_key_0123456789ab**** is inactive", true},
		{"****************89abcdef", true},
		{"TRP_LIVE_KEY_0123", true},
		{"API key is inactive", false},
		{"trp_liv", false}, // seven characters of the key's: too short to tell
		{"", false},
	} {
		assert.Equal(t, tt.want, holdsKeyPart(tt.s, key), tt.s)
	}
	assert.True(t, holdsKeyPart("the key abc is wrong", "abc"), "a key shorter than keyPart is looked for whole")
}
