package proxmox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	pve "github.com/luthermonson/go-proxmox"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// vmHandle is go-proxmox's VM object for a VM ID on a node, without the
// two GETs Node.VirtualMachine spends filling it in.
func (p *Provider) vmHandle(node string, vmid int) *pve.VirtualMachine {
	v := &pve.VirtualMachine{}
	v.New(p.client, node, vmid)
	return v
}

// wait follows a task's UPID until it stops; a task that stopped with an
// exit status other than OK is its failure, classified by its wording.
func (p *Provider) wait(ctx context.Context, op string, task *pve.Task, err error) error {
	if err != nil {
		return p.classify(op, err)
	}
	if task == nil { // an answer without a UPID: done synchronously
		return nil
	}
	poll := cmp.Or(time.Duration(p.cfg.TaskPoll), defaultTaskPoll)
	if err := task.Wait(ctx, poll, cmp.Or(time.Duration(p.cfg.TaskTimeout), defaultTaskTimeout)); err != nil {
		return p.classify(op, err)
	}
	if task.IsFailed || task.ExitStatus != "OK" {
		return errclass.New(classOfMessage(task.ExitStatus), ProviderName, op,
			fmt.Errorf("task %s ended: %s", task.UPID, task.ExitStatus))
	}
	return nil
}

// Ensure makes key's ordinal-th member exist, tagged and started. A VM already
// carrying its name is the member, left by an earlier attempt whose
// answer was lost or that stopped half-way: it is finished, never cloned
// again. existing is the whole cluster's list, so the name is looked for
// on every node.
func (p host) Ensure(ctx context.Context, op string, g poolgroup.Group, key connectors.IdempotencyKey, ordinal int, existing []vm) error {
	m := newMember(g, key, ordinal)
	op = op + " " + m.name
	for _, v := range existing {
		if v.name == m.name {
			return p.finish(ctx, op, g, m, v)
		}
	}
	t := p.templates[g.Size]
	newID, err := (&pve.Cluster{}).New(p.client).NextID(ctx)
	if err != nil {
		return p.classify(op, err)
	}
	target := t.Node
	if n := len(p.cfg.TargetNodes); n > 0 {
		target = p.cfg.TargetNodes[int(connectors.NameHash(m.name)[0])%n]
	}
	opts := &pve.VirtualMachineCloneOptions{
		NewID: newID, Name: m.name, Target: target, Pool: p.cfg.ResourcePool,
		Description: "visor-fleet node of pool " + g.PoolLabel + ", size " + g.Size,
	}
	if p.cfg.FullClone {
		opts.Full, opts.Storage = true, p.cfg.Storage
	}
	_, task, err := p.vmHandle(t.Node, t.VMID).Clone(ctx, opts)
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "already exists") {
		// Another clone took the ID nextid gave us: retryable, and the
		// retry's list settles whether that clone was ours.
		return errclass.New(errclass.Retryable, ProviderName, op, fmt.Errorf("VM ID %d was taken meanwhile: %w", newID, err))
	}
	if err := p.wait(ctx, op+" clone", task, err); err != nil {
		return err
	}
	return p.finish(ctx, op, g, m, vm{id: newID, name: m.name, node: target, status: "stopped"})
}

// finish tags a member with its group and starts it; both are skipped
// when already done.
func (p *Provider) finish(ctx context.Context, op string, g poolgroup.Group, m member, v vm) error {
	h := p.vmHandle(v.node, v.id)
	if tags := memberTags(g, m); !hasTags(v.tags, parseTags(tags)) {
		task, err := h.Config(ctx, pve.VirtualMachineOption{Name: "tags", Value: tags})
		if err := p.wait(ctx, op+" tag", task, err); err != nil {
			return err
		}
	}
	if v.status == "running" {
		return nil
	}
	task, err := h.Start(ctx)
	return p.wait(ctx, op+" start", task, err)
}

func hasTags(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// destroy stops a VM (hard: it has been drained, or never joined) and
// destroys it with its disks. A VM already gone is success.
func (p *Provider) destroy(ctx context.Context, op string, v vm) error {
	op = op + " " + v.String()
	h := p.vmHandle(v.node, v.id)
	if v.status == "running" {
		task, err := h.Stop(ctx)
		if err := p.wait(ctx, op+" stop", task, err); err != nil && !errclass.IsNotFound(err) {
			return err
		}
	}
	task, err := h.Delete(ctx, &pve.VirtualMachineDeleteOptions{Purge: true, DestroyUnreferencedDisks: true})
	if err := p.wait(ctx, op+" destroy", task, err); err != nil && !errclass.IsNotFound(err) {
		return err
	}
	return nil
}

func (p host) Destroy(ctx context.Context, op string, vms []vm) error {
	var errs []error
	for _, v := range vms {
		errs = append(errs, p.destroy(ctx, op, v))
	}
	return errors.Join(errs...)
}
