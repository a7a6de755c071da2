package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors/sim"
)

// simTruth is one simulated cluster as its state file has it: the cloud's
// groups, machines and leaks, and the cluster's Node objects.
type simTruth struct {
	Cluster   string
	Inventory sim.Inventory
	Nodes     []corev1.Node
	Pods      []corev1.Pod
}

// readSimTruth opens a copy of each sim cluster's state file (visor dev
// writes the file atomically, after every provider mutation and sim step),
// so reading never races the writer nor writes back.
func readSimTruth(dataDir string, clusters []string) (map[string]simTruth, error) {
	out := map[string]simTruth{}
	tmp, err := os.MkdirTemp("", "visor-chaos-sim-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, id := range clusters {
		src := filepath.Join(dataDir, "sim-"+id+".json")
		raw, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("sim state of cluster %s: %w", id, err)
		}
		cp := filepath.Join(tmp, filepath.Base(src))
		if err := os.WriteFile(cp, raw, 0o600); err != nil {
			return nil, err
		}
		f, err := sim.New(sim.Config{Cluster: id, Provider: "sim", Catalog: catalogs.Sim(), StatePath: cp})
		if err != nil {
			return nil, fmt.Errorf("sim state of cluster %s (%s): %w", id, src, err)
		}
		nodes, err := f.Clientset().CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("sim state of cluster %s: nodes: %w", id, err)
		}
		pods, err := f.Clientset().CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("sim state of cluster %s: pods: %w", id, err)
		}
		out[id] = simTruth{Cluster: id, Inventory: f.Inventory(), Nodes: nodes.Items, Pods: pods.Items}
	}
	return out, nil
}
