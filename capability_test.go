package travelrule_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

var capabilityTestKey = []byte("0123456789abcdef0123456789abcdef")

func TestNewCallbackURL(t *testing.T) {
	tests := []struct {
		name, base, ref string
		key             []byte
		wantPrefix      string // "" means an error
	}{
		{"plain", "https://vasp.example/cb", "pay-1", capabilityTestKey, "https://vasp.example/cb?tr_ref=pay-1&tr_tag="},
		{"query", "https://vasp.example/cb?a=1", "pay-1", capabilityTestKey, "https://vasp.example/cb?a=1&tr_ref=pay-1&tr_tag="},
		{"trailing ?", "https://vasp.example/cb?", "pay-1", capabilityTestKey, "https://vasp.example/cb?tr_ref=pay-1&tr_tag="},
		{"trailing &", "https://vasp.example/cb?a=1&", "pay-1", capabilityTestKey, "https://vasp.example/cb?a=1&tr_ref=pay-1&tr_tag="},
		{"short key", "https://vasp.example/cb", "pay-1", capabilityTestKey[:15], ""},
		{"empty ref", "https://vasp.example/cb", "", capabilityTestKey, ""},
		{"ref with a space", "https://vasp.example/cb", "pay 1", capabilityTestKey, ""},
		{"ref too long", "https://vasp.example/cb", strings.Repeat("r", 65), capabilityTestKey, ""},
		{"relative base", "/cb", "pay-1", capabilityTestKey, ""},
		{"fragment", "https://vasp.example/cb#", "pay-1", capabilityTestKey, ""},
		{"capability already there", "https://vasp.example/cb?tr_ref=x", "pay-1", capabilityTestKey, ""},
		{"too long", "https://vasp.example/" + strings.Repeat("p", 220), "pay-1", capabilityTestKey, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := travelrule.NewCallbackURL(tt.base, tt.ref, tt.key)
			if tt.wantPrefix == "" {
				require.Error(t, err)
				assert.NotContains(t, err.Error(), string(tt.key), "errors never quote the key")
				return
			}
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(got, tt.wantPrefix), got)
			assert.Len(t, strings.TrimPrefix(got, tt.wantPrefix), 22, "the tag is 22 characters")
			assert.Equal(t, tt.ref, travelrule.CallbackRef(got))
		})
	}
}

func TestVerifyCallbackURL(t *testing.T) {
	good, err := travelrule.NewCallbackURL("https://vasp.example/cb", "pay-1", capabilityTestKey)
	require.NoError(t, err)
	other, err := travelrule.NewCallbackURL("https://vasp.example/cb", "pay-2", capabilityTestKey)
	require.NoError(t, err)
	tag := func(s string) string { u, _ := url.Parse(s); return u.Query().Get("tr_tag") }
	tests := []struct {
		name    string
		url     string
		key     []byte
		wantRef string
		wantErr error
	}{
		{"valid", good, capabilityTestKey, "pay-1", nil},
		{"no capability", "https://vasp.example/cb", capabilityTestKey, "", travelrule.ErrCallbackUnsigned},
		{"no tag", "https://vasp.example/cb?tr_ref=pay-1", capabilityTestKey, "", travelrule.ErrCallbackUnsigned},
		{"other ref's tag", "https://vasp.example/cb?tr_ref=pay-1&tr_tag=" + tag(other), capabilityTestKey, "", travelrule.ErrCallbackTag},
		{"other key", good, []byte("fedcba9876543210fedcba9876543210"), "", travelrule.ErrCallbackTag},
		{"short key", good, capabilityTestKey[:15], "", travelrule.ErrCallbackTag},
		{"repeated ref", good + "&tr_ref=pay-1", capabilityTestKey, "", travelrule.ErrCallbackTag},
		{"invalid ref", "https://vasp.example/cb?tr_ref=p%20y&tr_tag=" + tag(good), capabilityTestKey, "", travelrule.ErrCallbackTag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			require.NoError(t, err)
			ref, err := travelrule.VerifyCallbackURL(u, tt.key)
			assert.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, tt.wantRef, ref)
		})
	}
	_, err = travelrule.VerifyCallbackURL(nil, capabilityTestKey)
	assert.ErrorIs(t, err, travelrule.ErrCallbackTag)
}

func TestCallbackRef(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://vasp.example/cb?tr_ref=pay-1&tr_tag=x", "pay-1"},
		{"https://vasp.example/cb", ""},
		{"https://vasp.example/cb?a=%zz&tr_ref=pay-1", "pay-1"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, travelrule.CallbackRef(tt.url), tt.url)
	}
	ref := travelrule.NewCallbackRef()
	assert.Len(t, ref, 22)
	assert.NotEqual(t, ref, travelrule.NewCallbackRef())
}
