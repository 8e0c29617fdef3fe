//go:build unix

package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vaspkit/travelrule/callback/storetest"
)

// errNoPgBouncer is the error of a machine without PgBouncer.
var errNoPgBouncer = errors.New("this test runs PgBouncer in front of PostgreSQL, and the program pgbouncer is not installed: install the Debian package pgbouncer (apt-get install pgbouncer); .ci/run does")

// pgBouncer is a PgBouncer these tests started in front of a server, in
// transaction pooling mode, on a loopback port; its admin console is its
// database "pgbouncer", for the user postgres.
type pgBouncer struct {
	dir    string
	port   int
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd was waited for
	once   sync.Once
}

// findPgBouncer returns the path of pgbouncer: on PATH, else Debian's
// /usr/sbin/pgbouncer (sbin is not on every user's PATH).
func findPgBouncer() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if p := "/usr/sbin/pgbouncer"; isExecutable(p) {
		return p, nil
	}
	return "", errNoPgBouncer
}

// startPgBouncer starts a PgBouncer in front of srv that lets in postgres
// and users, stopped when tb ends, or skips or fails tb as serverOrSkip
// does when it is not installed.
func startPgBouncer(tb testing.TB, srv *pgServer, users ...string) *pgBouncer {
	tb.Helper()
	program, err := findPgBouncer()
	var b *pgBouncer
	if err == nil {
		b, err = launchPgBouncer(program, srv, users)
	}
	serverOrSkip(tb, err)
	tb.Cleanup(b.stop)
	return b
}

// launchPgBouncer starts program in front of srv, in a directory of its
// own next to srv's, on a free port (another if that one was taken
// meanwhile), and waits until it passes a query to the server.
func launchPgBouncer(program string, srv *pgServer, users []string) (*pgBouncer, error) {
	dir, err := os.MkdirTemp(cluster.root, "pgbouncer-")
	if err != nil {
		return nil, err
	}
	if err := chown(dir); err != nil {
		return nil, err
	}
	// trust asks for no password; the user must still be in auth_file.
	var list bytes.Buffer
	for _, u := range append([]string{"postgres"}, users...) {
		fmt.Fprintf(&list, "%q \"\"\n", u)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), list.Bytes(), 0o644); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(startBound)
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		b, err := runPgBouncer(program, dir, port, srv, deadline)
		if errors.Is(err, errBind) && attempt < 5 {
			continue
		}
		return b, err
	}
}

// runPgBouncer writes the configuration for port and srv into dir, starts
// program with it and waits, until deadline, for a query through it to
// succeed; it returns errBind if the port was taken.
func runPgBouncer(program, dir string, port int, srv *pgServer, deadline time.Time) (*pgBouncer, error) {
	logPath := filepath.Join(dir, "pgbouncer.log")
	ini := fmt.Sprintf(`[databases]
* = host=127.0.0.1 port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
admin_users = postgres
pool_mode = transaction
max_client_conn = 500
default_pool_size = 20
server_login_retry = 1
logfile = %s
`, srv.port, port, filepath.Join(dir, "users.txt"), logPath)
	iniPath := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(iniPath, []byte(ini), 0o644); err != nil {
		return nil, err
	}
	_ = os.Remove(logPath)
	b := &pgBouncer{dir: dir, port: port, exited: make(chan struct{})}
	var out bytes.Buffer
	cmd, err := storetest.ServerCommand(program, iniPath)
	if err != nil {
		return nil, err
	}
	b.cmd = cmd
	b.cmd.Dir, b.cmd.Env, b.cmd.SysProcAttr = dir, serverEnv(), procAttr(cluster.cred)
	b.cmd.Stdout, b.cmd.Stderr = &out, &out
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting pgbouncer: %w", err)
	}
	go func() {
		_ = b.cmd.Wait()
		close(b.exited)
	}()
	err = b.waitReady(deadline)
	if err == nil {
		return b, nil
	}
	b.stop()
	log, _ := os.ReadFile(logPath)
	if bytes.Contains(log, []byte("Address already in use")) {
		return nil, errBind
	}
	return nil, fmt.Errorf("%w; pgbouncer's output:\n%s%s", err, out.Bytes(), log)
}

// waitReady polls PgBouncer with a query to the server until one
// succeeds, PgBouncer exits, or deadline passes.
func (b *pgBouncer) waitReady(deadline time.Time) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, b.dsn("postgres", "postgres"))
		if err == nil {
			_, err = conn.Exec(ctx, `SELECT 1`)
			_ = conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-b.exited:
			return errors.New("pgbouncer exited before it passed a query")
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgbouncer did not pass a query within %v: %w", startBound, err)
		}
	}
}

// dsn is the connection string of database as user through PgBouncer. A
// pool in transaction mode must not cache prepared statements across
// transactions (PgBouncer 1.21 and later can, with max_prepared_statements
// set; Debian 12's is 1.18).
func (b *pgBouncer) dsn(user, database string) string {
	mode := "exec"
	if database == "pgbouncer" {
		mode = "simple_protocol" // the admin console speaks no other
	}
	return fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable default_query_exec_mode=%s",
		b.port, user, database, mode)
}

// newPool returns a pool of at most maxConns connections through
// PgBouncer to the postgres database as user, closed when tb ends.
func (b *pgBouncer) newPool(tb testing.TB, user string, maxConns int) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(context.Background(), b.dsn(user, "postgres")+" pool_max_conns="+strconv.Itoa(maxConns))
	if err != nil {
		tb.Fatalf("pgxpool.New: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// admin runs command on PgBouncer's admin console.
func (b *pgBouncer) admin(ctx context.Context, command string) error {
	conn, err := pgx.Connect(ctx, b.dsn("postgres", "pgbouncer"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, command)
	return err
}

// stop stops PgBouncer at once (SIGTERM, its immediate shutdown) and
// waits for it; if it has not exited after 10 seconds, it kills its
// process group. Stopping a stopped PgBouncer does nothing.
func (b *pgBouncer) stop() {
	b.once.Do(func() { stopProcess(b.cmd, b.exited, syscall.SIGTERM) })
}
