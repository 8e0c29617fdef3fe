package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manyFaults has wrong JSON types in several places, a party that is not
// an object, unknown fields at both depths (one a field in other case)
// and a fault of Validate's.
const manyFaults = `{
  "asset": 7, "amount": 0.25, "callback": "not a url", "memo": "Zebulon's wallet",
  "originator": {"personType": "natural", "firstName": ["Zebulon"], "lastName": "Lovelace", "dateOfBirth": false, "frstName": "Zebulon", "Country": "GB"},
  "beneficiary": "Alan Turing"
}`

// manyFaultsLines are its faults, each once, in the order printed.
var manyFaultsLines = []string{
	"asset: must be a string",
	"amount: must be a string",
	"originator.firstName: must be a string",
	"originator.dateOfBirth: must be a string",
	"beneficiary: must be an object",
	"callback: must be an absolute http or https URL",
	"memo: unknown field",
	`originator.frstName: unknown field (did you mean "firstName"?)`,
	`originator.Country: unknown field (did you mean "country"?)`,
}

// TestCheckReportsEveryFault: validate and initiate -f report every fault
// of a file by JSON path, each once, with the file name once per line and
// JSON's words for types, never Go's.
func TestCheckReportsEveryFault(t *testing.T) {
	env, srv := sandboxEnv(t)
	file := writeFile(t, "faults.json", manyFaults)
	tests := []struct {
		name   string
		args   []string
		stream func(out, errOut string) string
	}{
		{"validate", []string{"validate", file}, func(out, _ string) string { return out }},
		{"validate --strict", []string{"validate", "--strict", file}, func(out, _ string) string { return out }},
		{"initiate", []string{"initiate", "-f", file}, func(_, errOut string) string { return errOut }},
		{"initiate --strict", []string{"initiate", "--strict", "-f", file}, func(_, errOut string) string { return errOut }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", env, tt.args...)
			assert.Equal(t, exitFailed, code)
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(tt.stream(out, errOut)), "\n") {
				if path, ok := strings.CutPrefix(line, file+": "); ok {
					assert.NotContains(t, path, file, "the file name once per line")
					got = append(got, path)
				}
			}
			assert.Equal(t, manyFaultsLines, got)
			for _, never := range []string{"Go struct", "of type", "cannot unmarshal", "Zebulon", "Lovelace", "Alan"} {
				assert.NotContains(t, out+errOut, never)
			}
			assert.Empty(t, srv.Transfers(), "nothing sent")
		})
	}
}

// mistypedTA is TRP's example travel address with its last digit changed:
// its checksum fails and its bytes do not end in t=i, so it is in none of
// the forms (an address with a character outside base58, such as
// "taNotATravelAddress0", is the service's opaque form and passes).
const mistypedTA = "ta2W2HPKfHxgSgrzY178knqXHg1H3jfeQrwQ9JrKBs9wx"

// TestCheckStrict: --strict adds ValidateStrict's faults once the types
// are right, without repeating the ones the sandbox reports.
func TestCheckStrict(t *testing.T) {
	strictFaults := strings.NewReplacer(`"GB"`, `"XQ"`, `"natural", "firstName": "Ada"`, `"robot", "firstName": "Ada"`, `"BTC"`, `""`,
		`"asset"`, `"travelAddress": "`+mistypedTA+`", "asset"`).Replace(validTransfer)
	file := writeFile(t, "strict.json", strictFaults)
	tests := []struct {
		name  string
		args  []string
		lines []string
	}{
		{"description only", []string{"validate", file}, []string{
			"asset: required", "travelAddress: not a travel address: ",
		}},
		{"strict", []string{"validate", "--strict", file}, []string{
			"asset: required", "travelAddress: not a travel address: ",
			"originator.personType: must be", "originator.country: must be an ISO 3166-1 alpha-2 country code",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := runCLI(t, context.Background(), "", nil, tt.args...)
			assert.Equal(t, exitFailed, code)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, len(tt.lines), out)
			for i, want := range tt.lines {
				assert.True(t, strings.HasPrefix(lines[i], file+": "+want), "line %d: %q, want %q", i, lines[i], want)
			}
		})
	}
}

// TestCheckFileErrors: what makes a file no transfer request is said once,
// with the file name once and without quoting the file.
func TestCheckFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	notJSON := writeFile(t, "notjson.json", `{"asset": "Zebulon`)
	array := writeFile(t, "array.json", `["Zebulon"]`)
	tests := []struct {
		name, file, want string
	}{
		{"missing", missing, missing + ": " + syscall.ENOENT.Error() + "\n"},
		{"not JSON", notJSON, notJSON + ": not a transfer request: line 1, column 19 (byte offset 18): unexpected end of JSON input\n"},
		{"not an object", array, array + ": not a transfer request: line 1, column 1 (byte offset 0): a JSON array, not an object\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := runCLI(t, context.Background(), "", nil, "validate", tt.file)
			assert.Equal(t, exitFailed, code)
			assert.Equal(t, tt.want, out)
			assert.NotContains(t, out, "Zebulon")
		})
	}
}

// TestKnownFieldsFollowTheSDK: the known field names are the json tags of
// the SDK's types.
func TestKnownFieldsFollowTheSDK(t *testing.T) {
	assert.Contains(t, transferSchema, "travelAddress")
	assert.Contains(t, transferSchema["originator"], "walletAddress")
	assert.Contains(t, transferSchema["beneficiary"], "nationalIdType")
	assert.Nil(t, transferSchema["asset"])
	assert.Empty(t, unknownFields([]byte(validTransfer)))
}

// TestValidateLocatesBrokenJSON: a file that is not JSON is reported with
// the line, column and byte offset where it breaks, and none of its text
// (a transfer file holds personal data).
func TestValidateLocatesBrokenJSON(t *testing.T) {
	broken := writeFile(t, "broken.json", strings.Replace(validTransfer, `"lastName": "Lovelace",`, `"lastName": Lovelace,`, 1))
	code, out, _ := runCLI(t, context.Background(), "", nil, "validate", broken)
	assert.Equal(t, exitFailed, code)
	assert.Regexp(t, `^`+regexp.QuoteMeta(broken)+`: not a transfer request: line \d+, column \d+ \(byte offset \d+\): invalid character \(a letter\) looking for beginning of value\n$`, out)
	assert.NotContains(t, out, "Lovelace")
}
