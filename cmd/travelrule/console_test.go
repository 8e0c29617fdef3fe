package main

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consoleGet GETs the path of the sandbox sc runs, at its origin (the
// service's path prefix left out), and returns the status and content type.
func consoleGet(t *testing.T, sc *sandboxCommand, path string) (int, string) {
	t.Helper()
	u, err := url.Parse(sc.env["TRAVELRULE_BASE_URL"])
	require.NoError(t, err)
	return getStatus(t, u.Scheme+"://"+u.Host+path)
}

// getStatus GETs u and returns the answer's status and content type.
func getStatus(t *testing.T, u string) (int, string) {
	t.Helper()
	res, err := http.Get(u)
	require.NoError(t, err)
	defer res.Body.Close()
	return res.StatusCode, res.Header.Get("Content-Type")
}

// TestSandboxConsole: the sandbox serves the console at "/" of its address
// by default, with the banner line that gives its URL and who it answers;
// --console=false serves none and prints no such line.
func TestSandboxConsole(t *testing.T) {
	for _, tt := range []struct {
		name   string
		flags  []string
		status int
		banner string // the console's line, after its URL; "": none
	}{
		{"by default", nil, http.StatusOK, " (open it in a browser; it answers this machine only)\n"},
		{"under a path prefix, at the origin", []string{"--prefix", "/api/v3"}, http.StatusOK, " (open it in a browser; it answers this machine only)\n"},
		{"--console-allow", []string{"--console-allow", "10.0.0.0/8", "--console-allow", "192.168.1.5"}, http.StatusOK,
			" (open it in a browser; it answers this machine and 10.0.0.0/8, 192.168.1.5/32 (--console-allow), with no login: anyone there can see the transfers, reveal their personal data and approve them)\n"},
		{"--console=false", []string{"--console=false"}, http.StatusNotFound, ""},
		{"--console=false frees the prefix /console", []string{"--console=false", "--prefix", "/console"}, http.StatusNotFound, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := runSandboxCommand(t, append([]string{"--addr", "127.0.0.1:0"}, tt.flags...)...)
			status, ctype := consoleGet(t, sc, "/")
			assert.Equal(t, tt.status, status)
			u, err := url.Parse(sc.env["TRAVELRULE_BASE_URL"])
			require.NoError(t, err)
			line := "console: " + u.Scheme + "://" + u.Host + "/"
			if tt.banner == "" {
				assert.NotContains(t, sc.errOut.String(), "console: http", "no console, no line")
				return
			}
			assert.Equal(t, "text/html; charset=utf-8", ctype)
			assert.Contains(t, sc.errOut.String(), line+tt.banner)
			// The service is still there, under its prefix.
			code, _, errOut := runCLI(t, context.Background(), validTransfer, sc.env, "initiate")
			assert.Equal(t, exitOK, code, errOut)
		})
	}
}

// TestSandboxConsoleAllow: the console answers a client off loopback only
// when --console-allow lets its address in.
func TestSandboxConsoleAllow(t *testing.T) {
	ip := nonLoopbackAddr(t)
	own := map[string]string{"TRAVELRULE_API_KEY": "team-sandbox-key-0123", "TRAVELRULE_CLIENT_SECRET": "team-client-secret-0123",
		"TRAVELRULE_SIGNING_SECRET": "team-signing-secret-0123"}
	for _, tt := range []struct {
		name   string
		flags  []string
		status int
	}{
		{"loopback only", nil, http.StatusForbidden},
		{"the address", []string{"--console-allow", ip.String()}, http.StatusOK},
		{"its prefix", []string{"--console-allow", netip.PrefixFrom(ip, ip.BitLen()-8).Masked().String()}, http.StatusOK},
		{"another prefix", []string{"--console-allow", "203.0.113.0/24"}, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := runSandboxCommandEnv(t, own, append([]string{"--addr", "0.0.0.0:0"}, tt.flags...)...)
			u, err := url.Parse(sc.env["TRAVELRULE_BASE_URL"])
			require.NoError(t, err)
			status, _ := getStatus(t, "http://"+net.JoinHostPort(ip.String(), u.Port())+"/")
			assert.Equal(t, tt.status, status)
		})
	}
}

// nonLoopbackAddr returns an IPv4 address of this machine off loopback,
// which a connection to it comes from; the test is skipped without one.
func nonLoopbackAddr(t *testing.T) netip.Addr {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap().Is4() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
				return ip.Unmap()
			}
		}
	}
	t.Skip("no IPv4 address off loopback on this machine")
	return netip.Addr{}
}

// TestSandboxConsoleFlagErrors: a --console-allow the sandbox cannot read,
// one without the console, and a --prefix that is the console's are usage
// errors that name the flags, before anything listens.
func TestSandboxConsoleFlagErrors(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background()) // a sandbox that starts stops at once
	cancel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--console-allow", "10.0.0.0/33"}, `--console-allow "10.0.0.0/33": want a CIDR prefix such as 10.0.0.0/8 or an IP address such as 192.168.1.5`},
		{[]string{"--console-allow", "office.example"}, `--console-allow "office.example": want a CIDR prefix`},
		{[]string{"--console=false", "--console-allow", "10.0.0.0/8"}, "--console-allow needs the console: drop --console=false"},
		{[]string{"--prefix", "/console"}, `--prefix: the path prefix "/console" is the console's: choose another --prefix, or serve no console (--console=false)`},
		{[]string{"--prefix", "console/v3/"}, `--prefix: the path prefix "/console/v3" is the console's`},
	} {
		t.Run(tt.args[len(tt.args)-1], func(t *testing.T) {
			code, out, errOut := runCLI(t, ended, "", nil, append([]string{"sandbox", "--addr", "127.0.0.1:0"}, tt.args...)...)
			assert.Equal(t, exitUsage, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, "sandbox: "+tt.want)
			assert.Contains(t, errOut, "Usage:")
			assert.NotContains(t, errOut, "travelruletest:")
			assert.NotContains(t, errOut, "sandbox listening")
		})
	}
}

// TestParseConsoleAllow: --console-allow takes a CIDR prefix or an IP
// address (a prefix of that one address), masked, an IPv4-mapped one as
// IPv4; anything else is an error naming the flag and the value.
func TestParseConsoleAllow(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string // the prefix; "": an error
	}{
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"192.168.1.5", "192.168.1.5/32"},
		{"2001:db8::/32", "2001:db8::/32"},
		{"2001:db8::7", "2001:db8::7/128"},
		{"::ffff:10.0.0.1", "10.0.0.1/32"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"0.0.0.0/0", "0.0.0.0/0"},
		{"10.0.0.0/33", ""},
		{"10.0.0", ""},
		{"office.example", ""},
		{"fe80::1%eth0", ""},
		{"", ""},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseConsoleAllow([]string{tt.in})
			if tt.want == "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "--console-allow "+`"`+tt.in+`"`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []netip.Prefix{netip.MustParsePrefix(tt.want)}, got)
		})
	}
	got, err := parseConsoleAllow([]string{"10.0.0.0/8", "192.168.1.5"})
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.5/32")}, got, "every value, in order")
}

// TestSandboxConsoleHelp: --help says where the console is, that it has no
// login, and what anyone --console-allow lets in can do.
func TestSandboxConsoleHelp(t *testing.T) {
	code, out, _ := runCLI(t, context.Background(), "", nil, "sandbox", "--help")
	require.Equal(t, exitOK, code)
	for _, w := range []string{
		"[--console=false | --console-allow PREFIX...]",
		`Console (--console=false: none): a web page at "/" of the sandbox's address, no login`,
		"-console-allow PREFIX",
		"The console has no login: anyone in PREFIX can see the transfers, reveal their personal data and approve them",
	} {
		assert.Contains(t, out, w)
	}
}
