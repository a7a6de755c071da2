// Package cluster is the deployment that outgrows one machine, on one
// machine: PostgreSQL (Debian's server), Temporal's frontend, history,
// matching and worker services as separate processes of the same
// go.temporal.io/server the embedded server links, the Web UI against that
// frontend, a sim host serving the simulated clusters to every worker,
// three `visor worker` processes on the platform queue and one tenant
// worker on tenant-<org>. `make cluster-test` runs its failover test:
// workers and a history service killed with SIGKILL under bursty demand,
// each kill timed until every pool has decided again, and the fleet
// checked from ground truth afterwards.
package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/temporal"

	"github.com/hanzoai/visor-fleet/testsuite/pgtemporal"
)

// The child process's environment: which service to run, and the
// cluster's layout every process shares.
const (
	envService = "VISOR_CLUSTER_SERVICE"
	envLayout  = "VISOR_CLUSTER_LAYOUT"
)

// uiService is the Web UI, run as its own process like the others.
const uiService = "ui"

// layout is what every service process is told: where PostgreSQL is,
// every service's ports (each process binds only its own), the namespace
// and the Web UI's port.
type layout struct {
	PGHost    string                  `json:"pgHost"`
	PGPort    int                     `json:"pgPort"`
	PGUser    string                  `json:"pgUser"`
	Ports     pgtemporal.ServicePorts `json:"ports"`
	UIPort    int                     `json:"uiPort"`
	Namespace string                  `json:"namespace"`
	LogLevel  string                  `json:"logLevel"`
}

func (l layout) frontend() string { return fmt.Sprintf("127.0.0.1:%d", l.Ports["frontend"].GRPC) }

// ServiceMain runs the service the environment names, when it names one,
// and exits: the test binary is re-executed as each of the cluster's
// processes (`VISOR_CLUSTER_SERVICE=history`, as the server's own
// `temporal-server start --service history` does). Call it first in TestMain.
func ServiceMain() {
	svc := os.Getenv(envService)
	if svc == "" {
		return
	}
	var l layout
	if err := json.Unmarshal([]byte(os.Getenv(envLayout)), &l); err != nil {
		fmt.Fprintf(os.Stderr, "%s %s: bad %s: %v\n", envService, svc, envLayout, err)
		os.Exit(2)
	}
	if err := runService(svc, l); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", svc, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runService runs one service until SIGTERM or SIGINT.
func runService(svc string, l layout) error {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	if svc == uiService {
		ui, err := startUI(l)
		if err != nil {
			return err
		}
		<-stop
		ui.Stop()
		return nil
	}
	if _, ok := l.Ports[svc]; !ok {
		return fmt.Errorf("no ports for service %q in the layout (services: frontend, history, matching, worker, ui)", svc)
	}
	pg := &pgtemporal.Postgres{Host: l.PGHost, Port: l.PGPort, User: l.PGUser}
	srv, err := temporal.NewServer(
		temporal.WithConfig(pgtemporal.ServerConfig(pg, l.Ports)),
		temporal.ForServices([]string{svc}),
		temporal.WithLogger(log.NewZapLogger(log.BuildZapLogger(log.Config{Level: l.LogLevel}))),
		temporal.WithDynamicConfigClient(pgtemporal.DynamicConfig()),
	)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	fmt.Printf("temporal %s service up\n", svc)
	<-stop
	return srv.Stop()
}
