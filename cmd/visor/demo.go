package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/types"
)

// demoTakeTimeout is how long `visor demo pods` waits for visor dev to take
// its request before saying that none did.
const demoTakeTimeout = 15 * time.Second

// newDemoCommand drives a running `visor dev`'s simulated demand by hand.
func newDemoCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Drive the simulated fleet of a running `visor dev` (demand for your own pools)",
	}
	var dataDir, cpu, memory string
	var count int
	pods := &cobra.Command{
		Use:   "pods POOL-ID --count N --cpu 500m --memory 1Gi",
		Short: "Run N pods of one size for a pool on a simulated cluster (0 removes them)",
		Long: `Asks the visor dev running on --data-dir to run N pods of the pool's service, each
requesting --cpu and --memory, on the pool's simulated cluster, in place of the pool's
demo section. Pods that do not fit the pool's nodes stay Pending, so the pool scales up
once they have waited its pendingThreshold; --count 0 removes them, and the pool scales
down after its idleWindow. The request survives a restart of visor dev (the simulated
cluster keeps its demand on disk).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := types.ParsePoolID(args[0])
			if err != nil {
				return err
			}
			if key.Provider != "sim" {
				return fmt.Errorf("%s: demo pods runs on simulated clusters only (provider sim), not %q", args[0], key.Provider)
			}
			if count < 0 {
				return fmt.Errorf("--count must not be negative, got %d", count)
			}
			req := devfleet.DemoRequest{Pool: key.WorkflowID(), Count: count}
			if req.Requests.MilliCPU, err = quantityFlag("--cpu", cpu, true); err != nil {
				return err
			}
			if req.Requests.Memory, err = quantityFlag("--memory", memory, false); err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(dataDir, "temporal.db")); err != nil {
				return fmt.Errorf("--data-dir %s holds no visor dev state (no temporal.db): start `visor dev --data-dir %s`, or point --data-dir at the one running", dataDir, dataDir)
			}
			path := devfleet.DemoRequestPath(dataDir, req.Pool)
			_ = os.Remove(devfleet.DemoErrorPath(path))
			if err := writeDemoRequest(path, req); err != nil {
				return err
			}
			deadline := time.Now().Add(demoTakeTimeout)
			for time.Now().Before(deadline) {
				if msg, err := os.ReadFile(devfleet.DemoErrorPath(path)); err == nil {
					_ = os.Remove(devfleet.DemoErrorPath(path))
					return fmt.Errorf("visor dev refused the request: %s", strings.TrimSpace(string(msg)))
				}
				if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: visor dev now runs %d pods of %s CPU, %s memory (pending ones buy nodes after the pool's pendingThreshold)\n",
						req.Pool, count, cpu, memory)
					return nil
				}
				time.Sleep(100 * time.Millisecond)
			}
			_ = os.Remove(path)
			return fmt.Errorf("no visor dev took the request within %s: is `visor dev --data-dir %s` running?", demoTakeTimeout, dataDir)
		},
	}
	f := pods.Flags()
	f.StringVar(&dataDir, "data-dir", ".visor", "the running visor dev's --data-dir")
	f.IntVar(&count, "count", 1, "pods to run (0 removes them)")
	f.StringVar(&cpu, "cpu", "500m", "CPU each pod requests (Kubernetes quantity: 500m, 2)")
	f.StringVar(&memory, "memory", "1Gi", "memory each pod requests (Kubernetes quantity: 512Mi, 4Gi)")
	cmd.AddCommand(pods)
	return cmd
}

// quantityFlag parses a Kubernetes quantity flag: CPU in millicores, the
// rest in bytes; zero or negative is refused.
func quantityFlag(flag, v string, milli bool) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a Kubernetes quantity (e.g. 500m, 2, 512Mi, 4Gi): %v", flag, v, err)
	}
	n := q.Value()
	if milli {
		n = q.MilliValue()
	}
	if n <= 0 {
		return 0, fmt.Errorf("%s %q must be more than zero", flag, v)
	}
	return n, nil
}

// writeDemoRequest writes the request whole (temporary file, then rename),
// so the fleet never reads half of it.
func writeDemoRequest(path string, req devfleet.DemoRequest) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
