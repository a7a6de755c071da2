package kwok

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Run reconciles every Resync until ctx ends: a machine whose boot delay
// has passed gets its Node, and a node of this provider whose machine is
// no longer recorded (deleted, its group gone) is deleted. Any number of
// workers may run it for one cluster; creates and deletes are idempotent.
func (p *Provider) Run(ctx context.Context) error {
	t := time.NewTicker(p.cfg.resync())
	defer t.Stop()
	for {
		if err := p.Reconcile(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("kwok: reconcile", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Reconcile is one pass of Run. Nodes are listed before records, so a
// machine removed between the two lists is never created again.
func (p *Provider) Reconcile(ctx context.Context) error {
	nodes, err := p.listNodes(ctx, LabelGroup)
	if err != nil {
		return err
	}
	records, err := p.listRecords(ctx, "")
	if err != nil {
		return err
	}
	now := p.now()
	recorded := map[string]bool{}
	var errs []error
	for _, g := range records {
		for _, m := range g.Machines {
			recorded[m.ID] = true
			if _, ok := nodes[m.ID]; ok || now.Before(m.CreatedAt.Add(p.cfg.bootDelay())) {
				continue
			}
			node, err := p.nodeObject(g, m)
			if err == nil {
				_, err = p.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
			}
			if err != nil && !apierrors.IsAlreadyExists(err) {
				errs = append(errs, fmt.Errorf("create node %s: %w", m.ID, err))
			}
		}
	}
	var orphans []string
	for name := range nodes {
		if !recorded[name] {
			orphans = append(orphans, name)
		}
	}
	errs = append(errs, p.deleteNodes(ctx, orphans))
	return errors.Join(errs...)
}
