package callback

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWebhookHeaders is the table of which header carries the delivery id,
// timestamp and signatures: the Standard Webhooks name, else the svix alias.
func TestWebhookHeaders(t *testing.T) {
	tests := []struct {
		name     string
		header   http.Header
		id, ts   string
		wantSigs []string
	}{
		{"none", http.Header{}, "", "", nil},
		{"standard names",
			http.Header{"Webhook-Id": {"a"}, "Webhook-Timestamp": {"1"}, "Webhook-Signature": {"v1,x"}},
			"a", "1", []string{"v1,x"}},
		{"svix names",
			http.Header{"Svix-Id": {"a"}, "Svix-Timestamp": {"1"}, "Svix-Signature": {"v1,x", "v1,y"}},
			"a", "1", []string{"v1,x", "v1,y"}},
		{"both: the standard names win",
			http.Header{"Webhook-Id": {"a"}, "Webhook-Timestamp": {"1"}, "Webhook-Signature": {"v1,x"},
				"Svix-Id": {"b"}, "Svix-Timestamp": {"2"}, "Svix-Signature": {"v1,y"}},
			"a", "1", []string{"v1,x"}},
		{"each header falls back on its own",
			http.Header{"Webhook-Id": {"a"}, "Svix-Timestamp": {"2"}, "Svix-Signature": {"v1,y"}},
			"a", "2", []string{"v1,y"}},
		{"an empty signature before a real one is not absent",
			http.Header{"Webhook-Signature": {"", "v1,x"}, "Svix-Signature": {"v1,y"}},
			"", "", []string{"", "v1,x"}},
		{"an empty standard header falls back",
			http.Header{"Webhook-Id": {""}, "Svix-Id": {"b"}, "Webhook-Signature": {""}, "Svix-Signature": {"v1,y"}},
			"b", "", []string{"v1,y"}},
		{"other prefixes are not aliases",
			http.Header{"X-Webhook-Id": {"a"}, "Svix-Id-Extra": {"b"}},
			"", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ts, sigs := webhookHeaders(tt.header)
			assert.Equal(t, tt.id, id)
			assert.Equal(t, tt.ts, ts)
			assert.Equal(t, tt.wantSigs, sigs)
			assert.Equal(t, tt.id, deliveryID(tt.header, []Verifier{&WebhookVerifier{}}), "de-duplication reads the id the verifier reads")
		})
	}
}

// TestTrustsDeliveryID: the webhook-id keys de-duplication only when a
// Standard Webhooks signature, which covers it, is checked.
func TestTrustsDeliveryID(t *testing.T) {
	wv := &WebhookVerifier{Secrets: [][]byte{[]byte("0123456789abcdef")}}
	dv := &DataIntegrityVerifier{secrets: [][]byte{[]byte("0123456789abcdef")}}
	var own Verifier = acceptAll{}
	tests := []struct {
		name      string
		verifiers []Verifier
		want      bool
	}{
		{"no verifier", nil, false},
		{"Standard Webhooks", []Verifier{wv}, true},
		{"a verifier of the integrator's", []Verifier{own}, false},
		{"a wrapped x-data-integrity verifier", []Verifier{wrapped{dv}}, false},
		{"a wrapped Standard Webhooks verifier", []Verifier{wrapped{wv}}, false},
		{"x-data-integrity", []Verifier{dv}, false},
		{"x-data-integrity and the integrator's", []Verifier{own, dv}, false},
		{"x-data-integrity and Standard Webhooks", []Verifier{dv, wv}, true},
	}
	h := http.Header{"Webhook-Id": {"msg_1"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, trustsDeliveryID(tt.verifiers))
			want := ""
			if tt.want {
				want = "msg_1"
			}
			assert.Equal(t, want, deliveryID(h, tt.verifiers))
		})
	}
}

// acceptAll is a verifier of an integrator's own that accepts everything.
type acceptAll struct{}

func (acceptAll) Verify(*http.Request, []byte) error { return nil }

// wrapped is a verifier that delegates to another, as a logging or metrics
// wrapper of the integrator's would.
type wrapped struct{ Verifier }
