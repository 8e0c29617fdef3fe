//go:build unix

package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vaspkit/travelrule/callback/storetest"
)

// requireExternal is the variable that turns a test's skip for a missing
// server into a failure; .ci/run sets it after installing the servers.
const requireExternal = "TRAVELRULE_REQUIRE_EXTERNAL"

// redisServer is a redis-server this test binary started, in a temporary
// directory on a free loopback port.
type redisServer struct {
	Addr string
	bin  string
	args []string // the test's own arguments
	cmd  *exec.Cmd
	log  *bytes.Buffer
	dir  string
	done chan struct{} // closed when the process has exited
}

// lookRedis returns the path of redis-server, or skips the test naming the
// Debian package that installs it (fails instead when requireExternal is
// set).
func lookRedis(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("redis-server")
	if err == nil {
		return p
	}
	msg := "these tests run a Redis server, and redis-server is not installed: install the Debian package redis-server (apt-get install redis-server); .ci/run does"
	if os.Getenv(requireExternal) != "" {
		t.Fatal(msg + " (" + requireExternal + " is set, so this is a failure)")
	}
	t.Skip(msg)
	return ""
}

// startRedis starts a redis-server with the extra arguments, waits until
// it answers, and stops it when the test ends. It keeps a save schedule
// that no test reaches (an hour), so that the stores accept it; a test
// of a server without persistence passes "--save", "".
func startRedis(t testing.TB, args ...string) *redisServer {
	t.Helper()
	s, err := launchRedis(lookRedis(t), t.TempDir(), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

// launchRedis starts redis-server in dir and waits until it answers PING;
// it tries other ports if the one it picked was taken in the meantime.
func launchRedis(bin, dir string, args ...string) (*redisServer, error) {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var s *redisServer
		if s, err = launchRedisOnce(bin, dir, args...); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func launchRedisOnce(bin, dir string, args ...string) (*redisServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &redisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), bin: bin, args: args, dir: dir}
	if err := s.run(); err != nil {
		return nil, err
	}
	return s, nil
}

// run starts the server's process on its address and directory, and waits
// until it answers.
func (s *redisServer) run() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	s.log, s.done = &bytes.Buffer{}, make(chan struct{})
	cmd, err := storetest.ServerCommand(s.bin, append([]string{
		"--port", port, "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "3600 1", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
	}, s.args...)...)
	if err != nil {
		return err
	}
	s.cmd = cmd
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = dieWithParent()
	if err := s.cmd.Start(); err != nil {
		return err
	}
	done := s.done
	go func() { _ = cmd.Wait(); close(done) }()
	if err := s.waitReady(); err != nil {
		s.stop()
		return &serverError{"redis-server did not start: " + err.Error(), s.log.String()}
	}
	return nil
}

// Restart kills the server, as a crash would, and starts it again on the
// same address and directory, with the same arguments: it keeps what its
// persistence kept.
func (s *redisServer) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
}

// waitReady polls the server with PING until it answers, the process
// exits, or 30 seconds pass.
func (s *redisServer) waitReady() error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := c.Ping(ctx).Err()
		var reply redis.Error // an error the server answered (NOAUTH): it is up
		if err == nil || errors.As(err, &reply) {
			return nil
		}
		select {
		case <-s.done:
			return err
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}

// Kill ends the server at once, as a crash would, and waits for it.
func (s *redisServer) Kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// Freeze stops the server's process without ending it: it keeps its
// connections and answers nothing, until Thaw.
func (s *redisServer) Freeze() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw lets a frozen server go on.
func (s *redisServer) Thaw() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

func (s *redisServer) stop() {
	s.Thaw()
	s.Kill()
}

// Client returns a client of the server, closed when the test ends.
func (s *redisServer) Client(t testing.TB, o *redis.Options) *redis.Client {
	t.Helper()
	if o == nil {
		o = &redis.Options{}
	}
	o.Addr = s.Addr
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// serverError is a server that failed to start, with its log.
type serverError struct{ msg, log string }

func (e *serverError) Error() string { return e.msg + "; its log:\n" + e.log }

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// shared is the server most tests share, started by the first test that
// asks for it and stopped by TestMain.
var shared struct {
	once   sync.Once
	server *redisServer
	err    error
}

// sharedRedis returns the shared server, starting it on first use.
func sharedRedis(t testing.TB) *redisServer {
	t.Helper()
	bin := lookRedis(t)
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "redisstore-test-")
		if err != nil {
			shared.err = err
			return
		}
		shared.server, shared.err = launchRedis(bin, dir)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.server
}

func TestMain(m *testing.M) {
	// go-redis logs each failed dial of the tests that stop a server; the
	// tests check the errors themselves.
	redis.SetLogger(quiet{})
	code := m.Run()
	if s := shared.server; s != nil {
		s.stop()
		_ = os.RemoveAll(s.dir)
	}
	os.Exit(code)
}

// quiet is a go-redis logger that logs nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// waitFor polls cond until it holds, failing the test if it does not
// within a bound that only a broken test reaches.
func waitFor(t testing.TB, what string, cond func(ctx context.Context) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond(ctx) {
		select {
		case <-ctx.Done():
			t.Fatalf("waited 20s for %s", what)
		case <-tick.C:
		}
	}
}
