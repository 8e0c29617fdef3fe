//go:build unix

package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaspkit/travelrule/callback/storetest"
)

// requireExternal is the variable that turns a test's skip for a missing
// external program into a failure; .ci/run sets it after installing them.
const requireExternal = "TRAVELRULE_REQUIRE_EXTERNAL"

// startBound bounds the start of a server, initdb included.
const startBound = 60 * time.Second

// errMissing is the error of a machine without PostgreSQL's programs.
var errMissing = errors.New("these tests run a PostgreSQL server, whose programs initdb and postgres are not installed: install the Debian package postgresql (apt-get install postgresql); .ci/run does")

// errBind is the error of a server that could not listen on its port.
var errBind = errors.New("postgres could not bind its port")

// pgServer is a PostgreSQL server these tests started.
type pgServer struct {
	dir    string // holds data/, the log and the unix socket
	port   int
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd was waited for
	once   sync.Once
}

// cluster is what every server of this test binary starts from: a data
// directory made by initdb once, and the user the servers run as.
var cluster struct {
	once     sync.Once
	err      error
	root     string // the directory of the template and the servers
	template string // the initdb'd data directory, never started
	postgres string // the postgres program
	cred     *syscall.Credential
}

// shared is the server most tests share, started on first use and stopped
// by TestMain.
var shared struct {
	once sync.Once
	srv  *pgServer
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.stop()
	}
	if cluster.root != "" {
		os.RemoveAll(cluster.root)
	}
	os.Exit(code)
}

// sharedServer returns the shared server, starting it on first use, or
// skips or fails tb when it cannot (see serverOrSkip).
func sharedServer(tb testing.TB) *pgServer {
	tb.Helper()
	shared.once.Do(func() {
		if shared.err = initCluster(); shared.err == nil {
			shared.srv, shared.err = startServer("shared")
		}
	})
	serverOrSkip(tb, shared.err)
	return shared.srv
}

// ownServer starts a server for tb alone, stopped and removed when tb ends.
func ownServer(tb testing.TB, name string) *pgServer {
	tb.Helper()
	err := initCluster()
	var srv *pgServer
	if err == nil {
		srv, err = startServer(name)
	}
	serverOrSkip(tb, err)
	tb.Cleanup(func() {
		srv.stop()
		os.RemoveAll(srv.dir)
	})
	return srv
}

// serverOrSkip skips tb when PostgreSQL, or PgBouncer that a test needs,
// is not installed (fails it instead when requireExternal is set, and
// when a benchmark's server failed to start) and fails it when the server
// failed to start.
func serverOrSkip(tb testing.TB, err error) {
	tb.Helper()
	switch {
	case err == nil:
	case isMissing(err) && os.Getenv(requireExternal) != "":
		tb.Fatal(err.Error() + " (" + requireExternal + " is set, so this is a failure)")
	case isMissing(err):
		tb.Skip(err.Error())
	case isBenchmark(tb):
		tb.Skip("the PostgreSQL server did not start: " + err.Error())
	default:
		tb.Fatal(err)
	}
}

// isMissing reports whether err is that of a program not installed.
func isMissing(err error) bool {
	return errors.Is(err, errMissing) || errors.Is(err, errNoPgBouncer)
}

func isBenchmark(tb testing.TB) bool {
	_, ok := tb.(*testing.B)
	return ok
}

// findPrograms returns the paths of initdb and postgres: on PATH, else in
// the newest /usr/lib/postgresql/*/bin (Debian's place for them).
func findPrograms() (initdb, postgres string, err error) {
	initdb, err1 := exec.LookPath("initdb")
	postgres, err2 := exec.LookPath("postgres")
	if err1 == nil && err2 == nil {
		return initdb, postgres, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		initdb, postgres = filepath.Join(d, "initdb"), filepath.Join(d, "postgres")
		if isExecutable(initdb) && isExecutable(postgres) {
			return initdb, postgres, nil
		}
	}
	return "", "", errMissing
}

// version is the major version in a path /usr/lib/postgresql/N/bin.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// initCluster makes the template data directory, once per test binary.
func initCluster() error {
	cluster.once.Do(func() { cluster.err = makeCluster() })
	return cluster.err
}

func makeCluster() error {
	initdb, postgres, err := findPrograms()
	if err != nil {
		return err
	}
	cluster.postgres = postgres
	if cluster.cred, err = serverUser(); err != nil {
		return err
	}
	// Not t.TempDir: its parents are private to root, and the server's
	// user must reach this directory.
	if cluster.root, err = os.MkdirTemp(os.TempDir(), "pgstore-test-"); err != nil {
		return err
	}
	if err := chown(cluster.root); err != nil {
		return err
	}
	cluster.template = filepath.Join(cluster.root, "template")
	ctx, cancel := context.WithTimeout(context.Background(), startBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, initdb, "-D", cluster.template, "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--no-locale", "--no-sync")
	cmd.Dir, cmd.Env, cmd.SysProcAttr = cluster.root, serverEnv(), procAttr(cluster.cred)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

// serverUser is the user the servers run as: nil (this process's) unless
// it is root, which PostgreSQL refuses; then "postgres", else "nobody".
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		if u, err = user.Lookup("nobody"); err != nil {
			return nil, fmt.Errorf("running as root, and neither user postgres nor nobody exists to run the server as: %w", err)
		}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// chown gives p to the servers' user, when they run as another.
func chown(p string) error {
	if cluster.cred == nil {
		return nil
	}
	return os.Chown(p, int(cluster.cred.Uid), int(cluster.cred.Gid))
}

func serverEnv() []string {
	return []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
}

// startServer copies the template to a directory of its own and starts a
// server on it, on a free loopback port (another if that one was taken
// meanwhile), and waits until it accepts connections.
func startServer(name string) (*pgServer, error) {
	dir := filepath.Join(cluster.root, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	if err := chown(dir); err != nil {
		return nil, err
	}
	if out, err := exec.Command("cp", "-Rp", cluster.template, filepath.Join(dir, "data")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copying the template: %w\n%s", err, out)
	}
	deadline := time.Now().Add(startBound)
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		srv, err := launch(dir, port, deadline)
		if errors.Is(err, errBind) && attempt < 5 {
			continue
		}
		return srv, err
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch starts postgres on dir/data at port and waits, until deadline,
// for it to accept connections; it returns errBind if the port was taken,
// and the server's log with any other failure to start.
func launch(dir string, port int, deadline time.Time) (*pgServer, error) {
	logPath := filepath.Join(dir, "postgres.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the server holds its own descriptor
	srv := &pgServer{dir: dir, port: port, exited: make(chan struct{})}
	if srv.cmd, err = storetest.ServerCommand(cluster.postgres, "-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-k", dir, "-F", "-c", "max_connections=300"); err != nil {
		return nil, err
	}
	srv.cmd.Dir, srv.cmd.Env, srv.cmd.SysProcAttr = dir, serverEnv(), procAttr(cluster.cred)
	srv.cmd.Stdout, srv.cmd.Stderr = logf, logf
	if err := srv.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	go func() {
		_ = srv.cmd.Wait()
		close(srv.exited)
	}()
	err = srv.waitReady(deadline)
	if err == nil {
		return srv, nil
	}
	srv.stop()
	log, _ := os.ReadFile(logPath)
	if bytes.Contains(log, []byte("could not bind")) || bytes.Contains(log, []byte("already in use")) {
		return nil, errBind
	}
	return nil, fmt.Errorf("%w; the server's log:\n%s", err, log)
}

// waitReady polls the server with a connection until one succeeds, the
// server exits, or deadline passes.
func (s *pgServer) waitReady(deadline time.Time) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.dsn())
		cancel()
		if err == nil {
			return conn.Close(context.Background())
		}
		select {
		case <-s.exited:
			return errors.New("postgres exited before it accepted connections")
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within %v: %w", startBound, err)
		}
	}
}

// dsn is the connection string of the server's postgres database.
func (s *pgServer) dsn() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", s.port)
}

// stop shuts the server down at once (SIGQUIT, PostgreSQL's immediate
// shutdown) and waits for it; if it has not exited after 10 seconds, it
// kills its process group. Stopping a stopped server does nothing.
func (s *pgServer) stop() {
	s.once.Do(func() { stopProcess(s.cmd, s.exited, syscall.SIGQUIT) })
}

// stopProcess sends sig to cmd's process and waits for exited to close; if
// it has not after 10 seconds, it kills the process group and waits.
func stopProcess(cmd *exec.Cmd, exited <-chan struct{}, sig syscall.Signal) {
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// newPool returns a pool of at most maxConns connections to srv (with
// extra, space-separated settings), closed when tb ends.
func newPool(tb testing.TB, srv *pgServer, maxConns int, extra ...string) *pgxpool.Pool {
	tb.Helper()
	dsn := srv.dsn() + " pool_max_conns=" + strconv.Itoa(maxConns) + " " + strings.Join(extra, " ")
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("pgxpool.New: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}
