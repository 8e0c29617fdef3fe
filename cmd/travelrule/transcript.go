package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// flow is what the curl transcript of the sandbox needs to know.
type flow struct {
	baseURL     string // the sandbox's URL, path prefix included
	apiKey      string // the sandbox's demo API key, not a secret; "": the user's, in $TRAVELRULE_API_KEY
	callbackURL string // where the transcript's transfers send their callbacks
}

// txHash is the transcript's transaction hash: made up.
const txHash = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"

// transcript returns a copy-paste shell transcript of the five stages of
// the live service's guide against the sandbox f describes, for a team
// that integrates from another language: a token for the API key, a
// travel address for the beneficiary, a transfer to it, an inbound inquiry
// started through the control plane with its resolution and state, and the
// transfer's txId. It is a POSIX shell script that needs curl and sed;
// every line that is not a command is a comment. Run, it prints the
// travel address, the transfer's and the inquiry's ids, then the answers
// of the resolution, the inquiry's state and the txId.
func transcript(f flow) string {
	var b strings.Builder
	auth := ` -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json'`
	step := func(comment string, lines ...string) {
		fmt.Fprintf(&b, "\n# %s\n%s\n", comment, strings.Join(lines, " \\\n  "))
	}
	extract := func(field string) string {
		return `| sed -n -E 's/.*"` + field + `":"([^"]+)".*/\1/p')`
	}
	b.WriteString("# The five stages of the service's guide with curl (POSIX shell; curl and\n")
	b.WriteString("# sed). Callbacks go to the callback URL of stages 3 and 4, signed with\n")
	b.WriteString("# x-data-integrity: run `travelrule listen` with TRAVELRULE_SIGNING_SECRET\n")
	b.WriteString("# set to the sandbox's signing secret (it says which on its standard error)\n")
	b.WriteString("# to see them.\n")
	step("1. A bearer token for the API key (POST /auth/token, no body): reuse it until its expiresIn runs out.",
		"TOKEN=$(curl -sS --fail-with-body -X POST -H "+apiKeyHeader(f.apiKey)+" "+shellQuote(f.baseURL+"/auth/token"),
		extract("accessToken"))
	step("2. A travel address for the beneficiary (the same externalId gets the same address).",
		"TA=$(curl -sS --fail-with-body "+shellQuote(f.baseURL+"/travel-address/generate")+auth,
		"-d "+shellQuote(sampleBeneficiary),
		extract("travelAddress"))
	fmt.Fprintln(&b, `echo "travel address $TA"`)
	step("3. Initiate a transfer to it (the OPEN_VASP flow; a travel address whose host is under .invalid is 404). The sandbox, the beneficiary's VASP, approves: an INQUIRY_RESOLUTION and a TRANSFER_RESOLUTION go to the callback URL.",
		"TRANSFER=$(curl -sS --fail-with-body "+shellQuote(f.baseURL+"/transfers/initiate")+auth,
		"-d "+shellQuote(`{"travelAddress":"`)+`"$TA"`+shellQuote(`",`+strings.TrimPrefix(sampleTransfer(f.callbackURL), "{")),
		extract("transferId"))
	fmt.Fprintln(&b, `echo "transfer $TRANSFER"`)
	step("4. The other way round: the control plane starts an inbound inquiry, which the sandbox posts to the callback URL as an INQUIRY (the parties in IVMS101, the transfer's id in the q of its callback); approve it with a callback URL, where the sandbox, the originator, sends the TRANSFER_CONFIRMATION; then look at its state and the callbacks delivered.",
		"ID=$(curl -sS --fail-with-body "+shellQuote(f.baseURL+"/sandbox/inquiries")+auth,
		"-d "+shellQuote(`{"callback":`+jsonString(f.callbackURL)+`}`),
		extract("transferId"))
	fmt.Fprintln(&b, `echo "inquiry $ID"`)
	fmt.Fprintf(&b, "%s\n", strings.Join([]string{
		"curl -sS --fail-with-body " + shellQuote(f.baseURL+"/transfers/inquiryResolution?q=") + `"$ID"` + auth,
		"-d " + shellQuote(`{"approved":"true","callback":`+jsonString(f.callbackURL)+`}`)}, " \\\n  "))
	fmt.Fprintln(&b, "echo")
	fmt.Fprintf(&b, "curl -sS --fail-with-body %s\"$ID\" -H \"Authorization: Bearer $TOKEN\"\n", shellQuote(f.baseURL+"/sandbox/transfers/"))
	fmt.Fprintln(&b, "echo")
	step("5. After the on-chain broadcast, the transaction's hash for the transfer of stage 3.",
		"curl -sS --fail-with-body "+shellQuote(f.baseURL+"/transfers/txId?q=")+`"$TRANSFER"`+auth,
		"-d "+shellQuote(`{"txId":"`+txHash+`"}`))
	fmt.Fprintln(&b, "echo")
	return b.String()
}

// apiKeyHeader is the transcript's x-api-key header, as a shell word: the
// demo key as it is, or the user's key, which is never printed, from the
// environment.
func apiKeyHeader(key string) string {
	if key == "" {
		return `"x-api-key: $TRAVELRULE_API_KEY"`
	}
	return shellQuote("x-api-key: " + key)
}

// sampleBeneficiary is the transcript's beneficiary, made up.
const sampleBeneficiary = `{"personType":"natural","firstName":"Alan","lastName":"Turing","walletAddress":"0x0123456789abcdef0123456789abcdef01234567","externalId":"beneficiary-1"}`

// sampleTransfer is the transcript's initiation body without its
// travelAddress (the transcript puts the generated one first): every
// required field, with made-up parties.
func sampleTransfer(callbackURL string) string {
	b, _ := json.Marshal(map[string]any{
		"asset": "BTC", "amount": "0.25", "callback": callbackURL,
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
