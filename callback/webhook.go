package callback

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"time"
)

// The headers of a Standard Webhooks signature
// (https://www.standardwebhooks.com).
const (
	// HeaderID carries the delivery's identifier, the same on every
	// redelivery; the handler de-duplicates by it. Senders using the svix
	// library send it as svix-id, which is read when webhook-id is absent
	// (so are svix-timestamp and svix-signature).
	HeaderID = "webhook-id"
	// HeaderTimestamp carries the signing time in Unix seconds.
	HeaderTimestamp = "webhook-timestamp"
	// HeaderSignature carries one or more space-separated signatures of
	// the form "v1,<base64 HMAC-SHA256>".
	HeaderSignature = "webhook-signature"
)

// The names the svix library sends the same three headers under. A
// request may use either set: each header is read under its Standard
// Webhooks name or, when that is absent, under its svix name.
const (
	svixID        = "svix-id"
	svixTimestamp = "svix-timestamp"
	svixSignature = "svix-signature"
)

// webhookHeaders returns the delivery id, timestamp and signatures of a
// request, each under its Standard Webhooks name or its svix alias. It is
// the one place that decides which header carries what: the verifier and
// the handler's de-duplication both read the id through it.
func webhookHeaders(h http.Header) (id, ts string, sigs []string) {
	return first(h, HeaderID, svixID), first(h, HeaderTimestamp, svixTimestamp), values(h, HeaderSignature, svixSignature)
}

// first returns the first value of header name, or of alias when name has
// no non-empty value.
func first(h http.Header, name, alias string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	return h.Get(alias)
}

// values returns the values of header name, or of alias when name has no
// non-empty value.
func values(h http.Header, name, alias string) []string {
	v := h.Values(name)
	for _, s := range v {
		if s != "" {
			return v
		}
	}
	return h.Values(alias)
}

// Sign returns the Standard Webhooks signature ("v1,<base64>") of a
// delivery: the HMAC-SHA256 under secret of id + "." + the Unix seconds of
// ts + "." + body. A sender (or a test) puts it in the [HeaderSignature]
// header, with id in [HeaderID] and the Unix seconds of ts in
// [HeaderTimestamp].
func Sign(secret []byte, id string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(signature(secret, id, strconv.FormatInt(ts.Unix(), 10), body))
}

func signature(secret []byte, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}
