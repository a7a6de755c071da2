package devfleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// DemoRequest asks a running `visor dev` to run Count pods of one size for
// a pool on a simulated cluster, in place of the pool's demo section (0
// removes them). `visor demo pods` writes it into the data directory's
// demo folder; the fleet takes it on its next tick and deletes the file,
// or leaves a .error file beside it saying why it could not.
type DemoRequest struct {
	Pool     string          `json:"pool"`
	Count    int             `json:"count"`
	Requests types.Resources `json:"requests"`
}

// DemoDir is where demo requests wait in a data directory.
func DemoDir(stateDir string) string { return filepath.Join(stateDir, "demo") }

// DemoRequestPath is the file a pool's request is written to.
func DemoRequestPath(stateDir, pool string) string {
	return filepath.Join(DemoDir(stateDir), strings.ReplaceAll(pool, "/", "_")+".json")
}

// DemoErrorPath is where the fleet says why it refused a request.
func DemoErrorPath(request string) string { return strings.TrimSuffix(request, ".json") + ".error" }

// TakeDemoRequests applies every request waiting in dir, in name order,
// and removes it; a request it cannot apply leaves its reason in a .error
// file. A missing directory is no request.
func (f *Fleet) TakeDemoRequests(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, name)
		applyErr := f.applyDemoRequest(path)
		if applyErr != nil {
			_ = os.WriteFile(DemoErrorPath(path), []byte(applyErr.Error()+"\n"), 0o600)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (f *Fleet) applyDemoRequest(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var req DemoRequest
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	key, err := types.ParsePoolID(req.Pool)
	if err != nil {
		return fmt.Errorf("pool %q: %w", req.Pool, err)
	}
	s, ok := f.Sims[key.Cluster]
	if !ok {
		return fmt.Errorf("pool %s: cluster %s is not a simulated cluster of this visor dev", req.Pool, key.Cluster)
	}
	return s.AddDemand(key, sim.Steady(req.Count, req.Requests))
}
