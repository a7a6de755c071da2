// Package pgtemporal runs the production shape's server side for tests: a
// throwaway PostgreSQL cluster (Debian's postgresql server binaries) and a
// Temporal server persisting to it through the postgres12 SQL plugin, with
// its schema created by Temporal's own SQL schema tool. The embedded
// SQLite server is the default; this is what proves the non-embedded path.
package pgtemporal

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // the driver the postgres12 plugin uses
)

// pgUser is the database superuser initdb creates (trust auth on loopback).
const pgUser = "postgres"

// Postgres is a running throwaway cluster on 127.0.0.1.
type Postgres struct {
	Host string
	Port int
	User string

	bin     string
	dataDir string
	asUser  string // run the server binaries as this OS user ("" = as we are)
}

// Address is host:port for clients.
func (p *Postgres) Address() string { return net.JoinHostPort(p.Host, strconv.Itoa(p.Port)) }

// MissingError says which server binaries were not found.
type MissingError struct{ Looked []string }

func (e *MissingError) Error() string {
	return fmt.Sprintf("PostgreSQL server binaries (initdb, pg_ctl) not found in %s (Debian: apt-get install -y postgresql)", strings.Join(e.Looked, ", "))
}

// FindServerBinaries returns the directory holding initdb and pg_ctl:
// the newest /usr/lib/postgresql/*/bin (Debian keeps them off PATH), else PATH.
func FindServerBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", &MissingError{Looked: append([]string{"/usr/lib/postgresql/*/bin"}, "PATH")}
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// requireServerBinaries skips the test without PostgreSQL, or fails it
// under CI=true, where .ci/run installs it.
func requireServerBinaries(t testing.TB) string {
	t.Helper()
	bin, err := FindServerBinaries()
	var missing *MissingError
	switch {
	case err == nil:
		return bin
	case errors.As(err, &missing) && os.Getenv("CI") == "true":
		t.Fatalf("%v; .ci/run must install it", err)
	default:
		t.Skip(err)
	}
	return ""
}

// StartPostgres initdbs a cluster in a fresh directory and starts it on a
// free loopback port; it is stopped and removed when the test ends. The
// server refuses to run as root, so as root it runs as the postgres user.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	p := &Postgres{Host: "127.0.0.1", User: pgUser, bin: requireServerBinaries(t)}
	if os.Geteuid() == 0 {
		p.asUser = pgUser
		if _, err := user.Lookup(p.asUser); err != nil {
			t.Fatalf("running as root, PostgreSQL must run as another user, but user %q does not exist: %v", p.asUser, err)
		}
	}
	// Not t.TempDir: its parents are 0700 root, which the postgres user cannot enter.
	dir, err := os.MkdirTemp("", "visor-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if p.asUser != "" {
		if err := chownToUser(dir, p.asUser); err != nil {
			t.Fatal(err)
		}
	}
	p.dataDir = filepath.Join(dir, "data")
	if out, err := p.run("initdb", "-D", p.dataDir, "-U", pgUser, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port, err := freeLowPort()
	if err != nil {
		t.Fatal(err)
	}
	p.Port = port
	// A test database needs no durability; these make schema setup and
	// the server's writes several times faster.
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
		port, dir)
	logFile := filepath.Join(dir, "postgres.log")
	if out, err := p.run("pg_ctl", "-D", p.dataDir, "-l", logFile, "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(logFile)
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	t.Cleanup(func() {
		_, _ = p.run("pg_ctl", "-D", p.dataDir, "-m", "immediate", "-w", "stop")
	})
	return p
}

// QueryInt runs a query answering one integer in database, for tests to
// look at what the server wrote.
func (p *Postgres) QueryInt(database, query string, args ...any) (int64, error) {
	db, err := sql.Open("postgres", fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", p.Host, p.Port, p.User, database))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s on %s: %w", query, database, err)
	}
	return n, nil
}

// run runs one server binary, as asUser when set.
func (p *Postgres) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(p.bin, name)
	var cmd *exec.Cmd
	if p.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", p.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = os.TempDir()
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
		return out, err
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		return out, fmt.Errorf("%s did not finish in 2m", name)
	}
}

func chownToUser(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}

// freeLowPort is a free loopback port below 32768: the SQL schema keeps a
// member's membership port in a smallint, so a port from the kernel's
// ephemeral range (32768 and up) makes the server fail at start.
func freeLowPort() (int, error) {
	for range 100 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free loopback port between 20000 and 32000")
}

// PostmasterPID is the server's main process, from its postmaster.pid
// file: what a test measures the cluster's CPU from.
func (p *Postgres) PostmasterPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(p.dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}
