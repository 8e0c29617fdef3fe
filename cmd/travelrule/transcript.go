package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vaspkit/travelrule/travelruletest"
)

// flow is what the curl transcript of the sandbox needs to know.
type flow struct {
	baseURL      string // the sandbox's URL, path prefix included
	tokenURL     string
	clientID     string
	clientSecret string
	callbackURL  string // where the transcript's transfers send their callbacks
}

// transcript returns a copy-paste shell transcript of the whole flow against
// the sandbox f describes, for a team that integrates from another
// language: a token, an initiation, an inbound inquiry started through the
// control plane, its resolution, and the inquiry's state. It is a POSIX
// shell script that needs curl and sed; every line that is not a command is
// a comment.
func transcript(f flow) string {
	var b strings.Builder
	auth := ` -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json'`
	step := func(comment string, lines ...string) {
		fmt.Fprintf(&b, "\n# %s\n%s\n", comment, strings.Join(lines, " \\\n  "))
	}
	b.WriteString("# The whole flow with curl (POSIX shell; curl and sed). Callbacks go to\n")
	b.WriteString("# the callback URL of steps 2 and 3: run `travelrule listen` to see them.\n")
	step("1. A bearer token (OAuth2 client credentials; token requests are form-encoded).",
		"TOKEN=$(curl -sS --fail-with-body -u "+shellQuote(f.clientID+":"+f.clientSecret),
		"-d grant_type=client_credentials "+shellQuote(f.tokenURL),
		`| sed -n -E 's/.*"access_token":"([^"]+)".*/\1/p')`)
	step("2. Initiate a transfer to TRP's example travel address (an address whose host is under .invalid is 404).",
		"curl -sS --fail-with-body "+shellQuote(f.baseURL+"/transfers/initiate")+auth,
		"-d "+shellQuote(sampleTransfer(f.callbackURL)))
	fmt.Fprintln(&b, "echo")
	step("3. Start an inbound inquiry: the sandbox plays the other VASP and posts it to the callback URL.",
		"ID=$(curl -sS --fail-with-body "+shellQuote(f.baseURL+"/sandbox/inquiries")+auth,
		"-d "+shellQuote(`{"callback":`+jsonString(f.callbackURL)+`}`),
		`| sed -n -E 's/.*"transferId":"([^"]+)".*/\1/p')`)
	fmt.Fprintln(&b, `echo "inquiry $ID"`)
	step("4. Resolve the inquiry (approve it).",
		"curl -sS --fail-with-body "+shellQuote(f.baseURL+"/transfers/inquiryResolution?q=")+`"$ID"`+auth,
		`-d '{"approved":"true"}'`)
	fmt.Fprintln(&b, "echo")
	step("5. The inquiry's state and the callbacks the sandbox delivered for it.",
		"curl -sS --fail-with-body "+shellQuote(f.baseURL+"/sandbox/transfers/")+`"$ID" -H "Authorization: Bearer $TOKEN"`)
	fmt.Fprintln(&b, "echo")
	return b.String()
}

// sampleTransfer is the transcript's initiation body: every required
// field, with made-up parties.
func sampleTransfer(callbackURL string) string {
	b, _ := json.Marshal(map[string]any{
		"travelAddress": travelruletest.KnownTravelAddress,
		"asset":         "BTC", "amount": "0.25", "callback": callbackURL,
		"originator":  map[string]string{"personType": "natural", "firstName": "Ada", "lastName": "Lovelace", "dateOfBirth": "1815-12-10"},
		"beneficiary": map[string]string{"personType": "natural", "firstName": "Alan", "lastName": "Turing", "dateOfBirth": "1912-06-23"},
	})
	return string(b)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// shellWord is s as one word of a POSIX shell: as it is when it holds only
// characters no shell treats specially, else quoted.
func shellWord(s string) string {
	if s == "" || strings.IndexFunc(s, func(r rune) bool {
		return !(r < utf8.RuneSelf && (isAlnum(byte(r)) || strings.ContainsRune("@%+=:,./_-", r)))
	}) >= 0 {
		return shellQuote(s)
	}
	return s
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// shellQuote quotes s for a POSIX shell: in single quotes, each single
// quote written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
