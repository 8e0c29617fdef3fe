package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule"
	"github.com/vaspkit/travelrule/travelruletest"
)

// TestUnderstood: which answers the SDK took as the success they should
// be, by their step, their status and the call's error.
func TestUnderstood(t *testing.T) {
	login := func(status int) exchange { return exchange{method: "POST", path: "/auth/token", status: status} }
	generate := func(status int) exchange {
		return exchange{method: "POST", path: "/travel-address/generate", status: status}
	}
	failedLogin := &travelrule.LoginError{StatusCode: 200}
	for _, tt := range []struct {
		name    string
		exs     []exchange
		callErr error
		want    []bool
	}{
		{"both steps", []exchange{login(200), generate(200)}, nil, []bool{true, true}},
		{"a login refused", []exchange{login(401)}, failedLogin, []bool{false}},
		{"a 200 login not understood", []exchange{login(200)}, failedLogin, []bool{false}},
		{"a login again after a token expired", []exchange{login(200), generate(403), login(200), generate(200)}, nil, []bool{true, false, true, true}},
		{"the second login failed", []exchange{login(200), login(200)}, failedLogin, []bool{true, false}},
		{"a generate answered 200 but refused", []exchange{login(200), generate(200)}, errors.New("not understood"), []bool{true, false}},
		{"a generate retried", []exchange{login(200), generate(200), generate(200)}, nil, []bool{true, false, true}},
		{"a generate cut short", []exchange{login(200), {method: "POST", path: "/travel-address/generate", status: 200, failed: true}}, errors.New("cut"), []bool{true, false}},
		{"another path", []exchange{login(200), {method: "GET", path: "/elsewhere", status: 200}}, nil, []bool{true, false}},
		{"none", nil, nil, []bool{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, understood(tt.exs, tt.callErr))
		})
	}
}

// TestDoctor runs the doctor against the double of the live service,
// answering the documented shapes and variants of them. Whatever the
// answers, the output never holds the key, the token, the travel address
// or any planted value.
func TestDoctor(t *testing.T) {
	wrappedToken := `{"status":true,"data":` + liveTokenBody + `}`
	snakeToken := `{"access_token":"` + liveToken + `","expires_in":3600,"token_type":"Bearer"}`
	extraToken := strings.Replace(liveTokenBody, `{`, `{"refreshToken":"PLANTED-REFRESH-0001",`, 1)
	// Unknown fields, one named with a secret (the key, echoed), one with a
	// name that is no identifier: both names are redacted.
	extraGenerate := `{"status":true,"meta":{"PLANTED-as-name":1},"data":{"travelAddress":"` + uncheckedTA + `","beneficiaryId":"PLANTED-BENEFICIARY-7",` +
		`"` + liveAPIKey + `":true,"PLANTED name":1}}`
	tests := []struct {
		name     string
		token    liveAnswer
		generate liveAnswer
		args     []string
		code     int
		wants    []string
		notWants []string
		redacted int // field names shown as [redacted]
	}{
		{
			name: "documented", token: liveAnswer{200, liveTokenBody}, generate: liveAnswer{200, liveGenerate}, code: exitOK,
			wants: []string{
				"login     POST /auth/token -> 200, application/json: understood by the SDK",
				"shape: unwrapped, camelCase (documented)",
				"generate  POST /travel-address/generate -> 200, application/json: understood by the SDK",
				`shape: {"status":true,"data":{"travelAddress":…}} (documented)`,
				"travel address: form unchecked",
				"ok: every answer was understood and has a documented shape",
			},
			notWants: []string{"unexpected field", "missing field", "note:", "problem:"},
		},
		{
			name: "wrapped token", token: liveAnswer{200, wrappedToken}, generate: liveAnswer{200, liveGenerate}, code: exitOK,
			wants: []string{`shape: wrapped in data, camelCase, "status":true (documented)`, "note: login: the docs show the token answer unwrapped in camelCase", "ok:"},
		},
		{
			name: "snake_case token", token: liveAnswer{200, snakeToken}, generate: liveAnswer{200, liveGenerate}, code: exitOK,
			wants: []string{"shape: unwrapped, snake_case (documented)", "ok:"},
		},
		{
			name: "wrapped token without status", token: liveAnswer{200, `{"data":` + liveTokenBody + `}`}, generate: liveAnswer{200, liveGenerate}, code: exitFailed,
			wants: []string{"shape: wrapped in data, camelCase (NOT documented)", "problem: login: POST /auth/token: 200 answer in no documented shape"},
		},
		{
			name: "unknown fields", token: liveAnswer{200, extraToken}, generate: liveAnswer{200, extraGenerate}, code: exitOK, redacted: 2,
			wants: []string{"unexpected field: refreshToken", "unexpected field: data.beneficiaryId", "unexpected field: meta\n", "ok:"},
		},
		{
			name: "unknown fields under --strict", token: liveAnswer{200, extraToken}, generate: liveAnswer{200, extraGenerate}, args: []string{"--strict"}, code: exitFailed, redacted: 2,
			wants: []string{"problem: login: unexpected field refreshToken", "problem: generate: unexpected field data.beneficiaryId", "FAILED: 5 problem(s)"},
		},
		{
			name: "missing token fields", token: liveAnswer{200, `{"accessToken":"` + liveToken + `"}`}, generate: liveAnswer{200, liveGenerate}, code: exitOK,
			wants: []string{"missing field: expiresIn", "missing field: tokenType", "note: login: the token has no lifetime", "ok:"},
		},
		{
			name: "unwrapped travel address", token: liveAnswer{200, liveTokenBody}, generate: liveAnswer{200, `{"travelAddress":"` + uncheckedTA + `"}`}, code: exitOK,
			wants: []string{`shape: {"travelAddress":…} (documented)`, "form unchecked", "ok:"},
		},
		{
			name: "the excerpt's status", token: liveAnswer{200, liveTokenBody}, generate: liveAnswer{200, `{"status":"succes","data":{"travelAddress":"` + uncheckedTA + `"}}`}, code: exitOK,
			wants: []string{`shape: {"status":"succes","data":{"travelAddress":…}} (documented)`, "ok:"},
		},
		{
			name: "opaque travel address", token: liveAnswer{200, liveTokenBody}, generate: liveAnswer{200, `{"status":true,"data":{"travelAddress":"` + opaqueTA + `"}}`}, code: exitOK,
			wants: []string{"travel address: form opaque", "note: travel address: opaque", "ok:"},
		},
		{
			name: "the docs' placeholder", token: liveAnswer{200, liveTokenBody}, generate: liveAnswer{200, `{"status":true,"data":{"travelAddress":"` + placeholderTA + `"}}`}, code: exitFailed,
			wants: []string{"travel address: form opaque", "problem: travel address: the documentation's placeholder example"},
		},
		{
			name: "an invalid travel address", token: liveAnswer{200, liveTokenBody}, generate: liveAnswer{200, `{"status":true,"data":{"travelAddress":"PLANTED address"}}`}, code: exitFailed,
			wants: []string{"travel address: form invalid", "problem: travel address: in no form"},
		},
		{
			name:  "refused key",
			token: liveAnswer{http.StatusForbidden, `{"status":false,"errors":[{"code":"FORBIDDEN","message":"API key inactive"}]}`}, code: exitFailed,
			wants: []string{
				"login     POST /auth/token -> 403, application/json: not understood as a success",
				`shape: {"status":false,"errors":[{"code":…,"message":…}]} (documented)`,
				"login failed", "the API key (or its customer) is inactive",
				"problem: the API key was refused",
			},
			notWants: []string{"API key inactive", "generate  POST"},
		},
		{
			name: "token not understood", token: liveAnswer{200, `{"jwt":"PLANTED-JWT"}`}, code: exitFailed,
			wants: []string{"shape: no accessToken (nor access_token), at the top level or in data (NOT documented)", "unexpected field: jwt", "problem: login: POST /auth/token: the SDK did not understand the answer", "login failed"},
		},
		{
			name: "travel address not understood", token: liveAnswer{200, liveTokenBody}, generate: liveAnswer{200, `{"status":true,"data":{"address":"` + uncheckedTA + `"}}`}, code: exitFailed,
			wants: []string{
				"generate  POST /travel-address/generate -> 200, application/json: not understood as a success",
				"shape: no travelAddress, at the top level or in data (NOT documented)", "unexpected field: data\n",
				"problem: generate: POST /travel-address/generate: the SDK did not understand the answer", "unexpected response",
			},
		},
		{
			name: "not JSON", token: liveAnswer{200, liveTokenBody}, generate: liveAnswer{200, `<html>PLANTED</html>`}, code: exitFailed,
			wants: []string{"shape: not JSON (NOT documented)"},
		},
		{
			name: "a refusal of generate", token: liveAnswer{200, liveTokenBody},
			generate: liveAnswer{http.StatusBadRequest, `{"status":false,"errors":[{"code":"VALIDATION_ERROR","message":"PLANTED Probe is invalid","field":"lastName"}]}`}, code: exitFailed,
			wants: []string{`shape: {"status":false,"errors":[{"code":…,"message":…}]} (documented)`, "unexpected field: errors[0].field", "400 Bad Request: VALIDATION_ERROR"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answers := map[string]liveAnswer{"/auth/token": tt.token}
			if tt.generate.status != 0 {
				answers["/travel-address/generate"] = tt.generate
			}
			ls := newLiveService(t, answers)
			code, out, errOut := runCLI(t, context.Background(), "", ls.env(), append([]string{"doctor"}, tt.args...)...)
			assert.Equal(t, tt.code, code, out+errOut)
			for _, w := range tt.wants {
				assert.Contains(t, out, w)
			}
			for _, w := range tt.notWants {
				assert.NotContains(t, out, w)
			}
			assert.Equal(t, tt.redacted, strings.Count(out, "unexpected field: data.[redacted]\n"))
			assert.Empty(t, errOut)
			assertNoSecrets(t, out+errOut, uncheckedTA, opaqueTA, placeholderTA, "Doctor", "0x0000000000000000000000000000000000000001")

			// The same run as JSON: the same verdict, the same secrets kept.
			code, out, errOut = runCLI(t, context.Background(), "", ls.env(), append([]string{"doctor", "--json"}, tt.args...)...)
			assert.Equal(t, tt.code, code, out+errOut)
			var rep doctorReport
			require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
			assert.Equal(t, tt.code == exitOK, rep.OK)
			assert.Equal(t, tt.code == exitOK, len(rep.Problems) == 0, rep.Problems)
			assert.Equal(t, ls.URL, rep.BaseURL)
			assertNoSecrets(t, out+errOut, uncheckedTA, opaqueTA, placeholderTA)
		})
	}
}

// TestDoctorSends: the doctor logs in with the key in x-api-key and sends
// the fixed test beneficiary with the token.
func TestDoctorSends(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/travel-address/generate": {200, liveGenerate}})
	code, out, _ := runCLI(t, context.Background(), "", ls.env(), "doctor")
	require.Equal(t, exitOK, code, out)
	logins := ls.received("/auth/token")
	require.Len(t, logins, 1)
	assert.Equal(t, liveAPIKey, logins[0].header.Get("X-Api-Key"))
	assert.Empty(t, logins[0].body)
	gen := ls.received("/travel-address/generate")
	require.Len(t, gen, 1)
	assert.JSONEq(t, `{"personType":"natural","firstName":"Doctor","lastName":"Probe",`+
		`"walletAddress":"0x0000000000000000000000000000000000000001","externalId":"travelrule-doctor","isSelfHosted":false}`, gen[0].body)
}

// TestDoctorJSON: the machine-readable report names each answer's shape
// and fields.
func TestDoctorJSON(t *testing.T) {
	ls := newLiveService(t, map[string]liveAnswer{"/travel-address/generate": {200,
		`{"status":true,"data":{"travelAddress":"` + uncheckedTA + `","beneficiaryId":"PLANTED-ID"}}`}})
	code, out, _ := runCLI(t, context.Background(), "", ls.env(), "doctor", "--json")
	require.Equal(t, exitOK, code, out)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, true, rep["ok"])
	assert.Equal(t, "unchecked", rep["travelAddressForm"])
	answers := rep["answers"].([]any)
	require.Len(t, answers, 2)
	login, gen := answers[0].(map[string]any), answers[1].(map[string]any)
	assert.Equal(t, "login", login["step"])
	assert.Equal(t, "unwrapped, camelCase", login["shape"])
	assert.Equal(t, true, login["documented"])
	assert.Equal(t, true, login["understood"])
	assert.Equal(t, []any{}, login["unexpectedFields"])
	assert.Contains(t, login["headers"], "Content-Type")
	assert.Equal(t, "generate", gen["step"])
	assert.Equal(t, "/travel-address/generate", gen["path"])
	assert.Equal(t, float64(200), gen["status"])
	assert.Equal(t, "application/json", gen["contentType"])
	assert.Equal(t, []any{"data.beneficiaryId"}, gen["unexpectedFields"])
}

// TestDoctorUsage: the doctor needs a base URL and an API key, from the
// environment or a file and never from a flag, and never prints the key.
func TestDoctorUsage(t *testing.T) {
	keyFile := writeFile(t, "key", liveAPIKey+"\n")
	ls := newLiveService(t, map[string]liveAnswer{"/travel-address/generate": {200, liveGenerate}})
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"no base URL", map[string]string{"TRAVELRULE_API_KEY": liveAPIKey}, nil, exitUsage, "no base URL"},
		{"no key", map[string]string{"TRAVELRULE_BASE_URL": ls.URL, "TRAVELRULE_TOKEN": "x.y.z"}, nil, exitUsage, "no API key: the doctor logs in with one"},
		{"a key flag is no flag", map[string]string{"TRAVELRULE_BASE_URL": ls.URL}, []string{"--api-key", liveAPIKey}, exitUsage, "flag provided but not defined: -api-key"},
		{"a key file", map[string]string{"TRAVELRULE_BASE_URL": ls.URL}, []string{"--api-key-file", keyFile}, exitOK, "ok:"},
		{"a key file from the environment", map[string]string{"TRAVELRULE_BASE_URL": ls.URL, "TRAVELRULE_API_KEY_FILE": keyFile}, nil, exitOK, "ok:"},
		{"a wrong key", map[string]string{"TRAVELRULE_BASE_URL": ls.URL, "TRAVELRULE_API_KEY": "trk_PLANTED_wrong"}, nil, exitFailed, "the API key is missing or not recognised"},
		{"a remote http URL", map[string]string{"TRAVELRULE_BASE_URL": "http://trp.example.com", "TRAVELRULE_API_KEY": liveAPIKey}, nil, exitUsage, "http"},
		{"help", nil, []string{"--help"}, exitOK, "never the key, the token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, context.Background(), "", tt.env, append([]string{"doctor"}, tt.args...)...)
			assert.Equal(t, tt.code, code, out+errOut)
			assert.Contains(t, out+errOut, tt.want)
			assertNoSecrets(t, out+errOut, "trk_PLANTED_wrong")
		})
	}
}

// TestRecorderBoundsBodies: the recorder keeps at most maxRecordedBody
// bytes of an answer and hands the SDK the whole of it.
func TestRecorderBoundsBodies(t *testing.T) {
	big := `{"status":true,"data":{"travelAddress":"` + uncheckedTA + `"},"pad":"` + strings.Repeat("x", maxRecordedBody) + `"}`
	ls := newLiveService(t, map[string]liveAnswer{"/travel-address/generate": {200, big}})
	code, out, _ := runCLI(t, context.Background(), "", ls.env(), "doctor")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, out, "generate  POST /travel-address/generate -> 200, application/json: understood by the SDK")
	assert.Contains(t, out, "problem: generate: POST /travel-address/generate: the answer is larger than 262144 bytes")
	assertNoSecrets(t, out, uncheckedTA)
}

// TestDoctorNoAnswer: a deployment that cannot be reached is a problem,
// said without the key.
func TestDoctorNoAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	env := map[string]string{"TRAVELRULE_BASE_URL": "http://" + addr, "TRAVELRULE_API_KEY": liveAPIKey}
	code, out, _ := runCLI(t, context.Background(), "", env, "doctor")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, out, "login     POST /auth/token -> no answer")
	assert.Contains(t, out, "problem: login: POST /auth/token: no answer came")
	assert.NotContains(t, out, "generate: no answer was recorded", "nothing was to be sent without a token")
	assertNoSecrets(t, out)
}

// TestDoctorAgainstTheSandbox: the sandbox answers as the live service is
// documented, so the doctor passes it; its keys that are inactive or
// expired fail, said as such.
func TestDoctorAgainstTheSandbox(t *testing.T) {
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	t.Cleanup(srv.Close)
	prefixed := travelruletest.NewServer(travelruletest.WithoutCallbacks(), travelruletest.WithPathPrefix("/api/v3"))
	t.Cleanup(prefixed.Close)
	tests := []struct {
		name  string
		base  string
		key   string
		code  int
		wants []string
	}{
		{"the default key", srv.URL, travelruletest.DefaultAPIKey, exitOK, []string{
			"login     POST /auth/token -> 200, application/json: understood by the SDK",
			"shape: unwrapped, camelCase (documented)",
			`shape: {"status":true,"data":{"travelAddress":…}} (documented)`,
			"travel address: form unchecked", "ok:",
		}},
		{"a base URL with a path", prefixed.URL, travelruletest.DefaultAPIKey, exitOK, []string{
			"POST /api/v3/auth/token -> 200", "POST /api/v3/travel-address/generate -> 200", "ok:",
		}},
		{"an inactive key", srv.URL, travelruletest.InactiveAPIKey, exitFailed, []string{
			"-> 403", "login failed", "the API key (or its customer) is inactive",
		}},
		{"an expired key", srv.URL, travelruletest.ExpiredAPIKey, exitFailed, []string{
			"-> 403", "login failed", "the API key has expired",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"TRAVELRULE_BASE_URL": tt.base, "TRAVELRULE_API_KEY": tt.key}
			code, out, errOut := runCLI(t, context.Background(), "", env, "doctor")
			assert.Equal(t, tt.code, code, out+errOut)
			for _, w := range tt.wants {
				assert.Contains(t, out, w)
			}
			assert.NotContains(t, out, tt.key)
			assert.NotContains(t, out, "eyJ", "no token (a JWT)")
			if code == exitOK {
				// The sandbox finds the doctor's beneficiary again: its
				// address is the one the doctor made, and was not printed.
				c, err := travelrule.NewClient(tt.base, travelrule.WithAPIKey(tt.key))
				require.NoError(t, err)
				res, err := c.GenerateTravelAddress(context.Background(), doctorBeneficiary())
				require.NoError(t, err)
				assert.NotContains(t, out, res.TravelAddress)
				assert.NotContains(t, out, res.TravelAddress[len(res.TravelAddress)-20:])
			}
		})
	}
}

// TestDoctorStrictAgainstTheSandbox: the sandbox answers with the fields
// the live docs show and no others, so "doctor --strict" passes it; a field
// the docs do not show, added to an answer of the same sandbox on its way
// (by a proxy), fails it, named.
func TestDoctorStrictAgainstTheSandbox(t *testing.T) {
	srv := travelruletest.NewServer(travelruletest.WithoutCallbacks())
	t.Cleanup(srv.Close)
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	tests := []struct {
		name string
		path string               // the answer edited, by its path's end; "": none
		edit func(map[string]any) // adds a field to the decoded answer
		code int
		want string
	}{
		{"as the sandbox answers", "", nil, exitOK, "ok: every answer was understood and has a documented shape"},
		{"generate with a beneficiaryId", "/travel-address/generate", func(m map[string]any) {
			m["data"].(map[string]any)["beneficiaryId"] = "b-1"
		}, exitFailed, "problem: generate: unexpected field data.beneficiaryId"},
		{"generate with a top-level field", "/travel-address/generate", func(m map[string]any) { m["requestId"] = "r-1" },
			exitFailed, "problem: generate: unexpected field requestId"},
		{"the token with a refreshToken", "/auth/token", func(m map[string]any) { m["refreshToken"] = "x" },
			exitFailed, "problem: login: unexpected field refreshToken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy := httputil.NewSingleHostReverseProxy(target)
			proxy.ModifyResponse = func(r *http.Response) error {
				if tt.edit == nil || !strings.HasSuffix(r.Request.URL.Path, tt.path) {
					return nil
				}
				var m map[string]any
				if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
					return err
				}
				_ = r.Body.Close()
				tt.edit(m)
				b, err := json.Marshal(m)
				if err != nil {
					return err
				}
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
				r.Header.Set("Content-Length", strconv.Itoa(len(b)))
				return nil
			}
			ps := httptest.NewServer(proxy)
			t.Cleanup(ps.Close)
			env := map[string]string{"TRAVELRULE_BASE_URL": ps.URL, "TRAVELRULE_API_KEY": travelruletest.DefaultAPIKey}
			code, out, errOut := runCLI(t, context.Background(), "", env, "doctor", "--strict")
			assert.Equal(t, tt.code, code, out+errOut)
			assert.Contains(t, out, tt.want)
			if tt.code == exitOK {
				assert.NotContains(t, out, "unexpected field")
				assert.NotContains(t, out, "missing field")
			}
		})
	}
}

// TestDoctorHidesKeyParts: a name or media type that holds the API key,
// re-cased or cut to a piece, is shown as "[redacted]".
func TestDoctorHidesKeyParts(t *testing.T) {
	const key = "trp_live_Kq7ZxW2mN9pLr4Ts"
	secrets := []string{key}
	tests := []struct {
		name string
		in   string
		hide bool
	}{
		{"the key", key, true},
		{"lower-cased, as a media type", strings.ToLower("application/" + key), true},
		{"a prefix as a field name", key[:12], true},
		{"a piece as a header name", "X-" + strings.ToUpper(key[9:17]), true},
		{"an ordinary name", "transferId", false},
		{"seven bytes of it", key[9:16], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.hide, holdsSecretPart(tt.in, secrets))
			if tt.hide && len(tt.in) <= 64 && !strings.Contains(tt.in, "/") {
				assert.Equal(t, "[redacted]", fieldName(tt.in, secrets))
			}
		})
	}
}
