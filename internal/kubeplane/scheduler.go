package kubeplane

import (
	"context"
	_ "embed"
	"os"
	"path/filepath"
)

// kwokStages are the node and pod stages kwok plays (see the file's head).
//
//go:embed kwok-stages.yaml
var kwokStages []byte

// startScheduler runs the real kube-scheduler with its default profile.
func (c *Cluster) startScheduler(ctx context.Context, binary string) error {
	// Above the default 50 requests/s: binding thousands of pods is one
	// request each.
	return c.startComponent(ctx, "kube-scheduler", binary, schedulerUser, "https", "--kube-api-qps=500", "--kube-api-burst=1000")
}

// startKwok runs kwok over the nodes annotated KwokManageSelector, with
// the stages kwokctl gives it.
func (c *Cluster) startKwok(ctx context.Context, binary string) error {
	stages := filepath.Join(c.dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o600); err != nil {
		return err
	}
	return c.startComponent(ctx, "kwok", binary, kwokUser, "http",
		"--config="+stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+KwokManageSelector,
		"--node-ip=127.0.0.1",
		"--cidr=10.244.0.0/16",
	)
}
