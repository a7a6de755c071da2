package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/temporal"

	"github.com/hanzoai/visor-fleet/connectors/sim/simremote"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite/pgtemporal"
)

// namespace the deployment registers.
const namespace = "visor"

// platformWorkers is how many `visor worker` processes poll the platform queue.
const platformWorkers = 3

// Deployment is the running multi-process system.
type Deployment struct {
	t      testing.TB
	dir    string
	Shape  FleetShape
	Spec   starter.SpecFile
	PG     *pgtemporal.Postgres
	layout layout
	// Services are Temporal's frontend, history, matching and worker
	// services and the Web UI, one process each.
	Services map[string]*proc
	// Workers poll the platform queue; Tenant the tenant's own queue.
	Workers []*proc
	Tenant  *proc
	Fleet   *devfleet.Fleet
	Client  client.Client
	Ledger  string
	// ApplyTook is how long `visor pool apply` of the whole fleet took.
	ApplyTook time.Duration
	visor     string
	// workerVisor is what the workers and the CLI run (Shape.WorkerBinary).
	workerVisor string
	host        *http.Server
	// layoutSimEndpoint is the sim host's URL.
	layoutSimEndpoint string
}

// Start brings the whole deployment up and applies the fleet: every
// process is ended when the test ends.
func Start(t testing.TB, shape FleetShape) *Deployment {
	t.Helper()
	began := time.Now()
	spec, raw, err := shape.spec()
	if err != nil {
		t.Fatal(err)
	}
	d := &Deployment{t: t, dir: t.TempDir(), Shape: shape, Spec: spec, Services: map[string]*proc{}}
	d.visor = visorBinary(t, d.dir)
	d.workerVisor = d.visor
	if shape.WorkerBinary != "" {
		d.workerVisor = shape.WorkerBinary
	}
	d.PG = pgtemporal.StartPostgres(t)
	logger := log.NewZapLogger(log.BuildZapLogger(log.Config{Level: "error", OutputFile: filepath.Join(d.dir, "schema.log")}))
	if err := pgtemporal.SetupSchema(d.PG, logger); err != nil {
		t.Fatalf("Temporal schema on PostgreSQL: %v", err)
	}
	ports, err := pgtemporal.FreeServicePorts(temporal.DefaultServices)
	if err != nil {
		t.Fatal(err)
	}
	d.layout = layout{PGHost: d.PG.Host, PGPort: d.PG.Port, PGUser: d.PG.User, Ports: ports, UIPort: freePort(t), Namespace: namespace, LogLevel: "warn"}
	d.startServices()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := pgtemporal.RegisterNamespace(ctx, d.layout.frontend(), namespace); err != nil {
		t.Fatalf("%v\nfrontend log:\n%s\nhistory log:\n%s", err, d.Services["frontend"].logTail(3000), d.Services["history"].logTail(3000))
	}
	t.Logf("cluster: PostgreSQL %s and Temporal's services (frontend %s) up in %s", d.PG.Address(), d.layout.frontend(), time.Since(began).Round(time.Second))
	if d.Client, err = client.Dial(client.Options{HostPort: d.layout.frontend(), Namespace: namespace, Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Client.Close)
	// As a platform team registers them before any worker runs.
	if err := starter.EnsureSearchAttributes(ctx, d.Client, namespace); err != nil {
		t.Fatal(err)
	}
	d.startSimHost()
	d.startWorkers()
	d.enrollAndApply(raw)
	t.Logf("cluster: %d pools on %d sim clusters applied; deployment up in %s", len(spec.Pools), len(spec.Clusters), time.Since(began).Round(time.Second))
	return d
}

// visorBinary is $VISOR_BIN (make cluster-test builds bin/visor), else
// one built now.
func visorBinary(t testing.TB, dir string) string {
	if p := os.Getenv("VISOR_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	out := filepath.Join(dir, "visor")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/visor")
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/visor: %v\n%s", err, b)
	}
	return out
}

// startServices runs each Temporal service and the Web UI as its own
// process: this test binary re-executed with VISOR_CLUSTER_SERVICE.
func (d *Deployment) startServices() {
	raw, err := json.Marshal(d.layout)
	if err != nil {
		d.t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		d.t.Fatal(err)
	}
	// History first: frontend and matching wait for its shards.
	for _, svc := range []string{"history", "matching", "frontend", "worker", uiService} {
		p := &proc{
			name: "temporal " + svc, path: self, args: []string{"-test.run=^$"},
			env:     []string{envService + "=" + svc, envLayout + "=" + string(raw)},
			logPath: filepath.Join(d.dir, "temporal-"+svc+".log"),
		}
		if err := p.start(); err != nil {
			d.t.Fatal(err)
		}
		d.Services[svc] = p
		d.t.Cleanup(func() { p.stop(10 * time.Second) })
		// One at a time: each process writes the cluster's metadata record
		// at start, and two doing it at once make the loser exit.
		if svc != uiService {
			d.waitLog(p, "service up", 2*time.Minute)
		}
	}
}

// waitLog waits until p's log shows line (since its latest start).
func (d *Deployment) waitLog(p *proc, line string, timeout time.Duration) {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(p.logPath)
		if i := strings.LastIndex(string(b), "--- start "); i >= 0 && strings.Contains(string(b[i:]), line) {
			return
		}
		if ok, why := p.alive(); !ok {
			d.t.Fatalf("%s: %s\n%s", p.name, why, p.logTail(3000))
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s: no %q in its log after %s\n%s", p.name, line, timeout, p.logTail(3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startSimHost runs the sim clusters in this process and serves them to
// every worker: ground truth is read from them directly.
func (d *Deployment) startSimHost() {
	f, err := devfleet.New(d.Spec, devfleet.Options{ProvisionDelay: 5 * time.Second})
	if err != nil {
		d.t.Fatal(err)
	}
	d.Fleet = f
	ctx, cancel := context.WithCancel(context.Background())
	d.t.Cleanup(cancel)
	f.Run(ctx, time.Second)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.t.Fatal(err)
	}
	d.host = &http.Server{Handler: simremote.Handler(f.Clusters), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = d.host.Serve(l) }()
	d.t.Cleanup(func() { _ = d.host.Close() })
	d.layoutSimEndpoint = "http://" + l.Addr().String()
}

// clustersFile is a worker's clusters file: the given clusters, each
// reached through the sim host, with its enrollment token.
func (d *Deployment) clustersFile(name string, ids []string) string {
	var b strings.Builder
	b.WriteString("clusters:\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "  - id: %s\n    provider: sim\n    enrollmentToken: file:%s\n    sim: {endpoint: %q}\n", id, d.tokenPath(id), d.layoutSimEndpoint)
	}
	path := filepath.Join(d.dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		d.t.Fatal(err)
	}
	return path
}

func (d *Deployment) tokenPath(cluster string) string {
	return filepath.Join(d.dir, "tokens", cluster+".token")
}

func (d *Deployment) conn() []string {
	return []string{"--address", d.layout.frontend(), "--namespace", namespace}
}

// startWorkers runs three platform workers (every cluster, the meter
// ledger) and the tenant's worker (its own cluster only).
func (d *Deployment) startWorkers() {
	if err := os.MkdirAll(filepath.Join(d.dir, "tokens"), 0o700); err != nil {
		d.t.Fatal(err)
	}
	var all []string
	for _, c := range d.Spec.Clusters {
		all = append(all, c.ID)
	}
	platform := d.clustersFile("platform-clusters.yaml", all)
	tenant := d.clustersFile("tenant-clusters.yaml", []string{d.Shape.tenantCluster()})
	d.Ledger = filepath.Join(d.dir, "meter.db")
	for i := range platformWorkers {
		args := append(d.conn(), "worker", "--clusters", platform, "--meter-ledger", d.Ledger)
		if i == 0 {
			args = append(args, "--register-search-attributes")
		}
		p := &proc{name: fmt.Sprintf("visor worker %d", i), path: d.workerVisor, args: args, logPath: filepath.Join(d.dir, fmt.Sprintf("worker-%d.log", i))}
		d.Workers = append(d.Workers, p)
	}
	d.Tenant = &proc{
		name: "visor worker (tenant " + d.Shape.TenantOrg + ")", path: d.workerVisor,
		args:    append(d.conn(), "worker", "--task-queue", tenantQueue(d.Shape.TenantOrg), "--clusters", tenant),
		logPath: filepath.Join(d.dir, "worker-tenant.log"),
	}
	for _, p := range append(d.Workers, d.Tenant) {
		if err := p.start(); err != nil {
			d.t.Fatal(err)
		}
		d.t.Cleanup(func() { p.stop(15 * time.Second) })
	}
}

// enrollAndApply enrolls every cluster (each token to the file the
// workers' clusters files name), then applies the pools with the CLI.
func (d *Deployment) enrollAndApply(spec []byte) {
	for _, c := range d.Spec.Clusters {
		d.eventually(30*time.Second, "enroll "+c.ID, func() error {
			_, err := d.visorCLI("cluster", "enroll", c.ID, "--provider", "sim", "--phase", "active", "--region", c.Region,
				"--sample-interval", c.SampleInterval.D().String(), "--token-file", d.tokenPath(c.ID))
			if err != nil && strings.Contains(err.Error(), "already") {
				return nil
			}
			return err
		})
	}
	path := filepath.Join(d.dir, "pools.yaml")
	if err := os.WriteFile(path, spec, 0o600); err != nil {
		d.t.Fatal(err)
	}
	began := time.Now()
	if out, err := d.visorCLI("pool", "apply", "-f", path, "--provider-queues", tenantQueue(d.Shape.TenantOrg)); err != nil {
		d.t.Fatalf("pool apply: %v\n%s", err, out)
	}
	d.ApplyTook = time.Since(began)
}

// visorCLI runs the visor CLI against the deployment.
func (d *Deployment) visorCLI(args ...string) (string, error) {
	cmd := exec.Command(d.workerVisor, append(d.conn(), args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("visor %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

func (d *Deployment) eventually(timeout time.Duration, what string, f func() error) {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s: not done in %s: %v", what, timeout, err)
		}
		time.Sleep(time.Second)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
