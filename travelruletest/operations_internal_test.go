package travelruletest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
)

func TestReadBody(t *testing.T) {
	big := bytes.Repeat([]byte("x"), maxBody)
	for _, tt := range []struct {
		name   string
		body   io.Reader
		length int64 // the declared Content-Length; -1: none (chunked)
		want   []byte
		status int // of the refusal; 0: read
	}{
		{"empty", http.NoBody, 0, []byte{}, 0},
		{"declared", bytes.NewReader([]byte(`{"a":1}`)), 7, []byte(`{"a":1}`), 0},
		{"chunked", bytes.NewReader([]byte(`{"a":1}`)), -1, []byte(`{"a":1}`), 0},
		{"chunked, in bits", iotest.OneByteReader(bytes.NewReader([]byte(`{"a":1}`))), -1, []byte(`{"a":1}`), 0},
		{"declared, with its end", iotest.DataErrReader(bytes.NewReader([]byte(`{"a":1}`))), 7, []byte(`{"a":1}`), 0},
		{"at the limit", bytes.NewReader(big), maxBody, big, 0},
		{"at the limit, chunked", bytes.NewReader(big), -1, big, 0},
		{"one beyond", bytes.NewReader(append(big, 'x')), maxBody + 1, nil, http.StatusRequestEntityTooLarge},
		{"one beyond, chunked", bytes.NewReader(append(big, 'x')), -1, nil, http.StatusRequestEntityTooLarge},
		{"unreadable", iotest.ErrReader(errors.New("bad chunk")), -1, nil, http.StatusBadRequest},
		{"unreadable midway", io.MultiReader(bytes.NewReader([]byte(`{"a"`)), iotest.ErrReader(errors.New("gone"))), 7, nil, http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/transfers/initiate", tt.body)
			r.ContentLength = tt.length
			body, a := readBody(r)
			if tt.status != 0 {
				if assert.NotNil(t, a) {
					assert.Equal(t, tt.status, a.status)
				}
				return
			}
			assert.Nil(t, a)
			assert.Equal(t, tt.want, body)
		})
	}
}

// TestReadBodySizedByContentLength checks that a declared body is read into
// a buffer of its size, not grown to it.
func TestReadBodySizedByContentLength(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 3000)
	r := httptest.NewRequest(http.MethodPost, "/transfers/initiate", bytes.NewReader(payload))
	body, a := readBody(r)
	assert.Nil(t, a)
	assert.Equal(t, payload, body)
	assert.Equal(t, len(payload)+1, cap(body))
}
