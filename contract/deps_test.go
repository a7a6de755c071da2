package contract_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Clients link no worker: contract is imported by every service that talks
// to pools, starter by every client, so neither may pull in the Temporal
// server, a SQLite driver, a provider SDK or the worker's own packages.

const module = "github.com/hanzoai/visor-fleet"

// workerLinks are import-path prefixes no client may link.
var workerLinks = []string{
	"go.temporal.io/server",
	"modernc.org/sqlite",
	"github.com/mattn/go-sqlite3",
	"github.com/digitalocean/godo",
	"github.com/aws/aws-sdk-go-v2",
	"github.com/aws/aws-sdk-go/", // v1, should it ever come in
	"github.com/hetznercloud/hcloud-go",
	"github.com/vmware/govmomi",
	"github.com/Azure/azure-sdk-for-go",
	"github.com/luthermonson/go-proxmox",
	"github.com/alibabacloud-go/",
	"github.com/digitalocean/go-libvirt",
	"k8s.io/client-go/kubernetes/fake",
	module + "/connectors/sim", // spec files' faults are types.FaultSpec
	module + "/workflows",
	module + "/activities",
	module + "/workers",
	module + "/metering",
	module + "/sizing",
}

func TestContractLinksNoTemporalNorWorker(t *testing.T) {
	// contract promises more: no Temporal at all, so a caller may use
	// another client.
	assertLinksNone(t, module+"/contract", append([]string{"go.temporal.io/"}, workerLinks...))
}

func TestStarterLinksNoWorker(t *testing.T) {
	assertLinksNone(t, module+"/starter", workerLinks)
}

// The pure metering (hour timeline, events, tiers) runs inside the pool
// workflow; its sinks (metering/ledger, metering/httpsink) run in
// activities. The pure half links no sink, Temporal, SQLite, provider SDK
// or connector, so the workflow's billing logic stays replay-safe and small.
func TestPureMeteringLinksNoSinkNorProvider(t *testing.T) {
	forbidden := []string{"go.temporal.io/", module + "/metering/ledger", module + "/metering/httpsink", module + "/connectors"}
	assertLinksNone(t, module+"/metering", append(forbidden, except(workerLinks, module+"/metering")...))
}

// The control law is pure: no Temporal, no worker, no connector, so a
// workflow calls it replay-safely and the scorer runs the very same law.
func TestLawLinksNoTemporalNorWorker(t *testing.T) {
	assertLinksNone(t, module+"/law", append([]string{"go.temporal.io/", module + "/connectors", module + "/catalogs"}, except(workerLinks, module+"/sizing")...))
}

// The scorer reaches the law and the providers' catalogs, never the pool
// workflow, an activity, a worker or a provider's package or SDK.
// The pool core is the pool's state and every change to it: pure, so it
// is tested as a table and replays the same on any worker.
func TestPoolCoreLinksNoTemporalNorWorker(t *testing.T) {
	assertLinksNone(t, module+"/poolcore", append([]string{"go.temporal.io/", module + "/catalogs"}, except(except(workerLinks, module+"/sizing"), module+"/metering")...))
}

func TestScoreLinksNoWorkflowsNorWorkers(t *testing.T) {
	assertLinksNone(t, module+"/score", except(workerLinks, module+"/sizing"))
}

// Credentials, payload keys and the billing sink resolve references
// through the leaf connectors/credentials: none of them links the
// provider contract, its registry or a provider.
func TestSecretUsersLinkNoConnectors(t *testing.T) {
	for _, pkg := range []string{"auth", "codec", "metering/httpsink"} {
		for _, dep := range deps(t, module+"/"+pkg) {
			if dep == module+"/connectors" || strings.HasPrefix(dep, module+"/connectors/") &&
				dep != module+"/connectors/credentials" && dep != module+"/connectors/errclass" {
				t.Errorf("%s links %s: resolve references with connectors/credentials", pkg, dep)
			}
		}
	}
}

// except is links without the one prefix a package may link.
func except(links []string, allowed string) []string {
	var out []string
	for _, l := range links {
		if l != allowed {
			out = append(out, l)
		}
	}
	return out
}

func assertLinksNone(t *testing.T, pkg string, forbidden []string) {
	t.Helper()
	for _, dep := range deps(t, pkg) {
		for _, f := range forbidden {
			if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("%s links %s (forbidden: %s)", pkg, dep, f)
			}
		}
	}
}

// deps lists pkg and every package it links.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	// go test puts its own go first on PATH.
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 {
		t.Fatalf("go list -deps %s listed %d packages; want the package and its imports", pkg, len(deps))
	}
	return deps
}
