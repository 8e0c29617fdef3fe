package travelrule_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
)

// wrapped nests a value in a struct, as an application's own types do.
type wrapped struct{ V any }

// formsOf renders x with every fmt verb, alone and nested in a struct, and
// through log/slog's text and JSON handlers, as a value, in a group and in
// a struct. For a type whose JSON form is its wire form (wire), the JSON
// handler's rendering of the struct (encoding/json's) is left out.
func formsOf(x any, wire bool) map[string]string {
	out := map[string]string{"Sprint": fmt.Sprint(x), "Sprintln": fmt.Sprintln(x)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out[verb] = fmt.Sprintf(verb, x)
		out["nested "+verb] = fmt.Sprintf(verb, wrapped{x})
	}
	for name, newHandler := range map[string]func(io.Writer) slog.Handler{
		"text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, scanned) },
		"json": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, scanned) },
	} {
		var buf bytes.Buffer
		l := slog.New(newHandler(&buf))
		l.Info("m", "value", x)
		l.Info("m", slog.Group("g", slog.Any("nested", x)))
		if name == "text" || !wire {
			l.Info("m", "struct", wrapped{x})
		}
		out["slog "+name] = buf.String()
	}
	return out
}

// TestEveryTypeIsRedacted renders every exported type that holds personal
// data, server text or a capability, made by real calls against a hostile
// server, and finds none of the planted values in any case or encoding.
func TestEveryTypeIsRedacted(t *testing.T) {
	const (
		echoed = "Zebulon Quaxworth"                    // server text that is a name
		wallet = "bc1qPlantedWalletAddressQuaxworth000" // an identifier-shaped personal value
		rawID  = "rid Zebulon"                          // a request id of any text
		tag    = "PlantedCapabilityKey0123"             // the capability key
	)
	key := []byte(tag)
	cbURL, err := travelrule.NewCallbackURL("https://vasp.example/cb", "pay-1", key)
	require.NoError(t, err)
	capTag := cbURL[strings.Index(cbURL, "tr_tag=")+len("tr_tag="):]
	req := hostileRequest()
	req.Callback = cbURL
	req.Originator.WalletAddress = wallet
	planted := append(piiOf(req), echoed, wallet, rawID, capTag, "Quaxworth")

	hostile := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Request-Id", rawID)
			w.Header().Set("X-Echo", echoed)
			answer(status, body)(w, r)
		}
	}
	c, _ := setup(t, hostile(200, `{"status":"succes","transferId":"`+echoed+`","note":"`+wallet+`"}`))
	res, err := c.InitiateTransfer(context.Background(), req)
	require.NoError(t, err)
	c, _ = setup(t, hostile(200, `{"status":true,"note":"`+echoed+`"}`))
	inq, err := c.ResolveInquiry(context.Background(), "t-1", &travelrule.InquiryResolution{Approved: "true", Callback: cbURL})
	require.NoError(t, err)

	c, _ = setup(t, hostile(400, `{"error":"`+wallet+`","message":"`+echoed+`","fields":[{"field":"`+wallet+`","reason":"`+echoed+`"},{"field":"originator.lastName","reason":"`+echoed+`"}]}`))
	_, err = c.InitiateTransfer(context.Background(), req)
	var apiErr *travelrule.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Len(t, apiErr.Fields, 2)

	c, _ = setup(t, hostile(500, `{"message":"`+echoed+`"}`))
	_, err = c.InitiateTransfer(context.Background(), req)
	var unknown *travelrule.OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)

	cb, err := travelrule.ParseCallback([]byte(`{"transferId":"` + echoed + `","status":"` + echoed + `","txId":"` + echoed + `"}`))
	require.NoError(t, err)

	tests := []struct {
		name  string
		value any
		wire  bool
		want  string // in the %+v form: what stays readable
	}{
		{"*TransferResult", res, true, "Attempts:1 Raw:["},
		{"TransferResult", *res, true, "Status:succes TransferID:[redacted] RequestID:[redacted]"},
		{"*InquiryResult", inq, true, "{Status:true RequestID:[redacted] Attempts:1 Raw:["},
		{"InquiryResolution", travelrule.InquiryResolution{Approved: "true", Callback: cbURL}, true, "{Approved:true Callback:[redacted]}"},
		{"*APIError", apiErr, false, "StatusCode:400 Code:[redacted] Message:[redacted]"},
		{"APIError wrapped", fmt.Errorf("paying: %w", apiErr), false, "paying: travelrule: InitiateTransfer: 400 Bad Request (fields: originator.lastName)"},
		{"FieldError from the server, unknown path", apiErr.Fields[0], true, "[redacted]: [redacted]"},
		{"FieldError from the server, known path", apiErr.Fields[1], true, "originator.lastName: [redacted]"},
		{"*OutcomeUnknownError", unknown, false, "Callback:[redacted] CallbackRef:pay-1"},
		{"OutcomeUnknownError wrapped", fmt.Errorf("paying: %w", unknown), false, "outcome unknown after 1 attempt(s)"},
		{"*Callback", cb, true, "TransferID:[redacted] Status:[redacted] TxID:[redacted]"},
		{"TransferRequest", *req, true, "Callback:[redacted]"},
		{"Party", req.Originator, true, "WalletAddress:[redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forms := formsOf(tt.value, tt.wire)
			for form, out := range forms {
				lower := strings.ToLower(out)
				for _, p := range planted {
					for _, enc := range []string{p, hex.EncodeToString([]byte(p)), strings.Trim(fmt.Sprint([]byte(p)), "[]"), strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(p)), "=")} {
						assert.NotContains(t, lower, strings.ToLower(enc), "%s leaks %q", form, p)
					}
				}
			}
			assert.Contains(t, forms["%+v"], tt.want)
		})
	}
}
