package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listCache holds the last lists of nodes and pods; it is valid while no
// write happened since, which keeps an idle fleet's Step nearly free.
type listCache struct {
	valid  bool
	writes uint64
	nodes  []corev1.Node
	pods   []corev1.Pod
}

func (f *Fleet) nodesAndPods(ctx context.Context) ([]corev1.Node, []corev1.Pod, error) {
	w := f.writes.Load()
	if f.cache.valid && f.cache.writes == w {
		return f.cache.nodes, f.cache.pods, nil
	}
	nodes, err := f.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	pods, err := f.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	f.cache = listCache{valid: true, writes: w, nodes: nodes.Items, pods: pods.Items}
	return nodes.Items, pods.Items, nil
}

// Step advances the simulation to now: machines launch toward their
// targets and boot, per-node agents start, demand creates and deletes
// pods, the scheduler binds what fits, disruption budgets are recounted,
// and changed state is saved.
func (f *Fleet) Step(now time.Time) error {
	ctx := context.Background()
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, g := range f.sortedGroups() {
		errs = append(errs, f.reconcileGroup(ctx, g, now))
	}
	errs = append(errs, f.interruptMachines(ctx, now))
	for _, phase := range []func(context.Context, time.Time, []corev1.Node, []corev1.Pod) error{
		f.bootMachines, f.syncNodePods, f.generateDemand, f.schedule,
	} {
		nodes, pods, err := f.nodesAndPods(ctx)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("sim: list cluster objects: %w", err))...)
		}
		errs = append(errs, phase(ctx, now, nodes, pods))
	}
	if f.writes.Load() != f.budgetsSynced {
		errs = append(errs, f.syncDisruptionBudgets())
		f.budgetsSynced = f.writes.Load()
	}
	f.pruneKeys(now)
	if f.writes.Load() != f.savedWrites {
		errs = append(errs, f.saveLocked(ctx))
	}
	return errors.Join(errs...)
}

// bootMachines registers machines whose Node is missing (as a kubelet
// re-registers), turns booted ones Ready, and deletes Nodes whose machine
// the cloud no longer has.
func (f *Fleet) bootMachines(ctx context.Context, now time.Time, nodes []corev1.Node, _ []corev1.Pod) error {
	byName := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var errs []error
	known := map[string]bool{}
	for _, g := range f.sortedGroups() {
		var terminated []string
		for _, m := range g.Machines {
			known[m.Node] = true
			n, ok := byName[m.Node]
			switch {
			case m.Fault == NeverJoins:
				// Its kubelet never registers.
			case m.Fault == TerminatedOutOfBand && f.faultDue(m, now):
				terminated = append(terminated, m.ID)
			case !ok:
				errs = append(errs, f.registerNode(ctx, g, m))
			case m.Fault == GoesNotReady && f.faultDue(m, now):
				if nodeReady(n) {
					errs = append(errs, f.markNotReady(ctx, n, now))
				}
			case !nodeReady(n) && !now.Before(m.CreatedAt.Add(f.cfg.ProvisionDelay)):
				errs = append(errs, f.markReady(ctx, n, now))
				if !m.Ready {
					m.Ready, m.ReadyAt = true, now
					f.touch()
				}
			}
		}
		// Vanished at the provider; the group replaces it at the next Step.
		for _, id := range terminated {
			errs = append(errs, f.removeMachine(ctx, g, g.machineIndex(id)))
		}
	}
	ours := providerIDPrefix + f.cfg.Cluster + "/"
	for _, n := range nodes {
		if strings.HasPrefix(n.Spec.ProviderID, ours) && !known[n.Name] {
			errs = append(errs, f.deleteNode(ctx, n.Name))
		}
	}
	return errors.Join(errs...)
}

// syncNodePods deletes pods bound to nodes that are gone (the pod garbage
// collector) and runs one agent pod per Ready node (the DaemonSet).
func (f *Fleet) syncNodePods(ctx context.Context, now time.Time, nodes []corev1.Node, pods []corev1.Pod) error {
	exists := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		exists[n.Name] = true
	}
	hasAgent := map[string]bool{}
	var errs []error
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" {
			continue
		}
		if !exists[p.Spec.NodeName] {
			errs = append(errs, f.deletePod(ctx, p))
			continue
		}
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "DaemonSet" && ref.Name == agentName {
			hasAgent[p.Spec.NodeName] = true
		}
	}
	for i := range nodes {
		if n := &nodes[i]; nodeReady(n) && !hasAgent[n.Name] {
			_, err := f.cs.CoreV1().Pods(agentNamespace).Create(ctx, agentPod(n.Name, now), metav1.CreateOptions{})
			if err != nil {
				errs = append(errs, fmt.Errorf("start agent on %s: %w", n.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Run steps the fleet every tick until ctx ends, then saves. A failed step
// is logged and the next one retries: one bad tick must not end a demo.
func (f *Fleet) Run(ctx context.Context, tick time.Duration) error {
	if tick <= 0 {
		return fmt.Errorf("sim: Run tick must be positive, got %s", tick)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if err := f.Step(f.cfg.Clock()); err != nil {
			f.cfg.Logger.Warn("sim: step failed", "cluster", f.cfg.Cluster, "err", err)
		}
		select {
		case <-ctx.Done():
			return f.Save()
		case <-t.C:
		}
	}
}
