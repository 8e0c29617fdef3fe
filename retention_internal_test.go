package travelrule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strings reachable from v by reflection, unexported fields included: what
// a reflective printer (testify's diff, a debugger) shows of a value.
func reachableStrings(v reflect.Value, seen map[uintptr]bool, out *[]string) {
	switch v.Kind() {
	case reflect.String:
		*out = append(*out, v.String())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		if v.Kind() == reflect.Pointer {
			if seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
		}
		reachableStrings(v.Elem(), seen, out)
	case reflect.Struct:
		for i := range v.NumField() {
			reachableStrings(v.Field(i), seen, out)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // Raw: the server's body, documented as such
		}
		for i := range v.Len() {
			reachableStrings(v.Index(i), seen, out)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			reachableStrings(it.Key(), seen, out)
			reachableStrings(it.Value(), seen, out)
		}
	}
}

// A result keeps nothing of the call's secrets: no bearer token, no API
// key, no personal value of the request, even where only reflection
// reaches (unexported fields).
func TestResultRetainsNoSecret(t *testing.T) {
	const token = "secret-bearer-token-0123"
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":true,"data":{"transferId":"tr-0001"}}`))
	}))
	defer ts.Close()
	c, err := NewClient(ts.URL, WithTokenSource(StaticToken(token)))
	require.NoError(t, err)
	req := &TransferRequest{Asset: "BTC", Amount: "0.5", Callback: "https://vasp-a.example/cb",
		Originator:  Party{PersonType: "natural", FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1815-12-10"},
		Beneficiary: Party{PersonType: "natural", FirstName: "Alan", LastName: "Turing", DateOfBirth: "1912-06-23"}}
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	var got []string
	reachableStrings(reflect.ValueOf(res), map[uintptr]bool{}, &got)
	all := strings.Join(got, "\n")
	for _, v := range []string{token, "Lovelace", "1815-12-10", "Turing", "vasp-a.example"} {
		assert.NotContains(t, all, v)
	}
}
