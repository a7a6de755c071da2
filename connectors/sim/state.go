package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const stateVersion = 1

// stateFile is everything a restarted fleet needs: the cloud's groups,
// machines and applied keys, the demand clocks, and the cluster's objects.
type stateFile struct {
	Version  int       `json:"version"`
	Cluster  string    `json:"cluster"`
	Provider string    `json:"provider"`
	SavedAt  time.Time `json:"savedAt"`
	Sim      simState  `json:"sim"`
	Objects  objects   `json:"objects"`
}

type objects struct {
	Nodes                []corev1.Node                  `json:"nodes"`
	Pods                 []corev1.Pod                   `json:"pods"`
	ReplicaSets          []appsv1.ReplicaSet            `json:"replicaSets"`
	DaemonSets           []appsv1.DaemonSet             `json:"daemonSets"`
	PodDisruptionBudgets []policyv1.PodDisruptionBudget `json:"podDisruptionBudgets"`
}

// Save writes the fleet's state to Config.StatePath now; Run calls it on
// shutdown. Without a StatePath it does nothing.
func (f *Fleet) Save() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.saveLocked(context.Background())
}

// saveLocked writes the whole state atomically (temp file, fsync, rename),
// so a crash leaves the previous state or the new one, never half of one.
func (f *Fleet) saveLocked(ctx context.Context) error {
	if f.cfg.StatePath == "" {
		f.savedWrites = f.writes.Load()
		return nil
	}
	w := f.writes.Load()
	sf := stateFile{
		Version: stateVersion, Cluster: f.cfg.Cluster, Provider: f.cfg.Provider,
		SavedAt: f.cfg.Clock().UTC(), Sim: f.st,
	}
	var err error
	if sf.Objects, err = f.snapshot(ctx); err != nil {
		return fmt.Errorf("sim: save state: %w", err)
	}
	b, err := json.Marshal(sf)
	if err != nil {
		return fmt.Errorf("sim: save state: %w", err)
	}
	if err := writeFileAtomic(f.cfg.StatePath, b); err != nil {
		return fmt.Errorf("sim: save state to %s: %w", f.cfg.StatePath, err)
	}
	f.savedWrites = w
	return nil
}

func (f *Fleet) snapshot(ctx context.Context) (objects, error) {
	var o objects
	all := metav1.ListOptions{}
	nodes, err := f.cs.CoreV1().Nodes().List(ctx, all)
	if err != nil {
		return o, err
	}
	pods, err := f.cs.CoreV1().Pods("").List(ctx, all)
	if err != nil {
		return o, err
	}
	rss, err := f.cs.AppsV1().ReplicaSets("").List(ctx, all)
	if err != nil {
		return o, err
	}
	dss, err := f.cs.AppsV1().DaemonSets("").List(ctx, all)
	if err != nil {
		return o, err
	}
	pdbs, err := f.cs.PolicyV1().PodDisruptionBudgets("").List(ctx, all)
	if err != nil {
		return o, err
	}
	o = objects{Nodes: nodes.Items, Pods: pods.Items, ReplicaSets: rss.Items, DaemonSets: dss.Items, PodDisruptionBudgets: pdbs.Items}
	return o, nil
}

func writeFileAtomic(path string, b []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(b); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// removeSaveLeftovers deletes the temp files of saves a kill cut short
// (writeFileAtomic's, named after this state file only): nothing else
// would, and the state file itself is whole either way.
func removeSaveLeftovers(path string) error {
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), filepath.Base(path)+".tmp-*"))
	if err != nil {
		return fmt.Errorf("sim: state folder of %s: %w", path, err)
	}
	for _, name := range left {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sim: remove the leftover of a cut-short save %s: %w", name, err)
		}
	}
	return nil
}

// load restores a saved fleet; a missing file is a fresh fleet.
func (f *Fleet) load() error {
	if f.cfg.StatePath == "" {
		return nil
	}
	if err := removeSaveLeftovers(f.cfg.StatePath); err != nil {
		return err
	}
	b, err := os.ReadFile(f.cfg.StatePath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sim: read state: %w", err)
	}
	var sf stateFile
	if err := json.Unmarshal(b, &sf); err != nil {
		return fmt.Errorf("sim: state file %s is not valid JSON: %w", f.cfg.StatePath, err)
	}
	switch {
	case sf.Version != stateVersion:
		return fmt.Errorf("sim: state file %s has version %d; this build reads %d", f.cfg.StatePath, sf.Version, stateVersion)
	case sf.Cluster != f.cfg.Cluster || sf.Provider != f.cfg.Provider:
		return fmt.Errorf("sim: state file %s belongs to cluster %q provider %q, not %q %q",
			f.cfg.StatePath, sf.Cluster, sf.Provider, f.cfg.Cluster, f.cfg.Provider)
	}
	for _, g := range sf.Sim.Groups {
		if _, ok := f.catalog[g.Size]; !ok {
			return fmt.Errorf("sim: state file %s: group %s has size %q, which the catalog no longer offers", f.cfg.StatePath, g.ID, g.Size)
		}
	}
	f.st = sf.Sim
	fresh := newSimState()
	if f.st.Groups == nil {
		f.st.Groups = fresh.Groups
	}
	if f.st.Keys == nil {
		f.st.Keys = fresh.Keys
	}
	if f.st.Demand == nil {
		f.st.Demand = fresh.Demand
	}
	var objs []runtime.Object
	for i := range sf.Objects.Nodes {
		objs = append(objs, &sf.Objects.Nodes[i])
	}
	for i := range sf.Objects.Pods {
		objs = append(objs, &sf.Objects.Pods[i])
	}
	for i := range sf.Objects.ReplicaSets {
		objs = append(objs, &sf.Objects.ReplicaSets[i])
	}
	for i := range sf.Objects.DaemonSets {
		objs = append(objs, &sf.Objects.DaemonSets[i])
	}
	for i := range sf.Objects.PodDisruptionBudgets {
		objs = append(objs, &sf.Objects.PodDisruptionBudgets[i])
	}
	for _, o := range objs {
		if err := f.cs.Tracker().Add(o); err != nil {
			return fmt.Errorf("sim: state file %s: restore object: %w", f.cfg.StatePath, err)
		}
	}
	f.savedWrites = f.writes.Load()
	return nil
}
