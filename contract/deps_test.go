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
	for _, f := range workerLinks {
		if f != module+"/metering" {
			forbidden = append(forbidden, f)
		}
	}
	assertLinksNone(t, module+"/metering", forbidden)
}

func assertLinksNone(t *testing.T, pkg string, forbidden []string) {
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
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("%s links %s (forbidden: %s)", pkg, dep, f)
			}
		}
	}
}
