package travelrule

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A callback URL's capability tags are secrets as url.ParseQuery reads
// them, escaped and unescaped.
func TestAppendURLSecrets(t *testing.T) {
	const u = "https://vasp.example/cb"
	tests := []struct {
		name, url string
		want      []string
	}{
		{"none", "", nil},
		{"no query", u, []string{u}},
		{"a tag", u + "?ref=p-1&tr_tag=s3cr3t", []string{u + "?ref=p-1&tr_tag=s3cr3t", "s3cr3t"}},
		{"a tag, escaped", u + "?tr_tag=a%2Bb+c", []string{u + "?tr_tag=a%2Bb+c", "a%2Bb+c", "a+b c"}},
		{"an escaped key", u + "?tr%5Ftag=k", []string{u + "?tr%5Ftag=k", "k"}},
		{"two tags", u + "?tr_tag=a&tr_tag=b", []string{u + "?tr_tag=a&tr_tag=b", "a", "b"}},
		{"a fragment", u + "?tr_tag=a#tr_tag=b", []string{u + "?tr_tag=a#tr_tag=b", "a"}},
		{"another parameter", u + "?tr_tags=a", []string{u + "?tr_tags=a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, appendURLSecrets(nil, tt.url))
		})
	}
}
