package gcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	compute "google.golang.org/api/compute/v1"

	"github.com/hanzoai/visor-fleet/connectors"
)

// group is a MIG as a node group, with its managed instances.
func (p *Provider) group(ctx context.Context, op string, mig *compute.InstanceGroupManager) (connectors.NodeGroup, error) {
	d, _ := readDescription(mig.Description)
	managed, err := p.instances(ctx, op, mig.Name)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	g := connectors.NodeGroup{ID: mig.Name, Name: mig.Name, Size: d.Visor.Size, TargetSize: int(mig.TargetSize), Labels: map[string]string{}}
	for k, v := range d.Visor.Labels {
		g.Labels[k] = v
	}
	created, err := p.creationTimes(ctx, op, mig.Name)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	for _, m := range managed {
		in := instanceOf(m)
		in.CreatedAt = created[in.Name]
		g.Instances = append(g.Instances, in)
	}
	return g, nil
}

// creationTimes are when the group's VMs were created, by name: managed
// instances do not say, so the VMs are listed by the group label their
// template gives them.
func (p *Provider) creationTimes(ctx context.Context, op, mig string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := p.svc.Instances.List(p.cfg.Project, p.cfg.Zone).Filter("labels."+LabelGroup+" eq "+mig).
		Pages(ctx, func(page *compute.InstanceList) error {
			for _, in := range page.Items {
				if t, err := time.Parse(time.RFC3339, in.CreationTimestamp); err == nil {
					out[in.Name] = t
				}
			}
			return nil
		})
	if err != nil {
		return nil, p.classify(op, err)
	}
	return out, nil
}

func (p *Provider) instances(ctx context.Context, op, mig string) ([]*compute.ManagedInstance, error) {
	var out []*compute.ManagedInstance
	err := p.svc.InstanceGroupManagers.ListManagedInstances(p.cfg.Project, p.cfg.Zone, mig).
		Pages(ctx, func(page *compute.InstanceGroupManagersListManagedInstancesResponse) error {
			for _, m := range page.ManagedInstances {
				if m != nil {
					out = append(out, m)
				}
			}
			return nil
		})
	if err != nil {
		return nil, p.classify(op, err)
	}
	return out, nil
}

// instanceOf: the instance name is the VM's hostname, which the kubelet
// registers as the node name; the ID is Compute's numeric instance ID.
func instanceOf(m *compute.ManagedInstance) connectors.Instance {
	in := connectors.Instance{ID: strconv.FormatUint(m.Id, 10), Name: managedName(m), State: connectors.InstanceRunning}
	switch m.CurrentAction {
	case "CREATING", "CREATING_WITHOUT_RETRIES", "RECREATING", "VERIFYING":
		in.State = connectors.InstanceCreating
	case "DELETING", "ABANDONING":
		in.State = connectors.InstanceDeleting
	default:
		if m.InstanceStatus == "PROVISIONING" || m.InstanceStatus == "STAGING" {
			in.State = connectors.InstanceCreating
		}
	}
	if m.Id == 0 {
		in.ID = in.Name // a record whose VM does not exist yet
	}
	return in
}

func managedName(m *compute.ManagedInstance) string {
	if m.Name != "" {
		return m.Name
	}
	return lastSegment(m.Instance)
}

// failing reports a record the MIG could not create: no VM, and the last
// attempt's errors.
func failing(m *compute.ManagedInstance) bool {
	return m.InstanceStatus == "" && m.LastAttempt != nil && m.LastAttempt.Errors != nil && len(m.LastAttempt.Errors.Errors) > 0
}

// refusedInstances watches a scale-up's new instances for up to
// AttemptWait: while some have neither a VM nor an error it waits; when
// some were refused (quota, capacity) it deletes those records, which
// lowers the target to what the MIG could make and stops its retries,
// and answers the refusal as a typed error.
func (p *Provider) refusedInstances(ctx context.Context, op, mig string) error {
	deadline := time.Now().Add(p.attempt)
	for {
		managed, err := p.instances(ctx, op, mig)
		if err != nil {
			return err
		}
		var refused []*compute.ManagedInstance
		pending := 0
		for _, m := range managed {
			switch {
			case failing(m):
				refused = append(refused, m)
			case m.InstanceStatus == "" && strings.HasPrefix(m.CurrentAction, "CREATING"):
				pending++
			}
		}
		if len(refused) > 0 {
			return p.dropRefused(ctx, op, mig, refused)
		}
		if pending == 0 || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return p.classify(op, ctx.Err())
		case <-time.After(p.poll):
		}
	}
}

func (p *Provider) dropRefused(ctx context.Context, op, mig string, refused []*compute.ManagedInstance) error {
	oe := &opError{}
	urls := make([]string, 0, len(refused))
	for _, m := range refused {
		urls = append(urls, p.instanceURL(managedName(m)))
		for _, e := range m.LastAttempt.Errors.Errors {
			oe.codes, oe.msgs = append(oe.codes, e.Code), append(oe.msgs, e.Message)
		}
	}
	if err := p.deleteInstances(ctx, mig, urls, ""); err != nil {
		return p.classify(op, fmt.Errorf("the group's instances were refused (%v), and deleting their records failed: %w", oe, err))
	}
	return p.classify(op, fmt.Errorf("instance group %s: %d instances could not be created: %w", mig, len(refused), oe))
}

func (p *Provider) instanceURL(name string) string {
	return "projects/" + p.cfg.Project + "/zones/" + p.cfg.Zone + "/instances/" + name
}

// deleteInstances deletes instances of the MIG by URL; the MIG lowers its
// target by as many. Instances already gone are skipped, not refused.
// requestID, when not empty, makes a retry of the same deletion one call.
func (p *Provider) deleteInstances(ctx context.Context, mig string, urls []string, requestID string) error {
	req := &compute.InstanceGroupManagersDeleteInstancesRequest{Instances: urls, SkipInstancesOnValidationError: true}
	call := p.svc.InstanceGroupManagers.DeleteInstances(p.cfg.Project, p.cfg.Zone, mig, req).Context(ctx)
	if requestID != "" {
		call = call.RequestId(requestID)
	}
	return p.do(ctx, func() (*compute.Operation, error) { return call.Do() })
}

// DeleteNodes deletes the named instances (by node name, which is the
// instance name, or by instance ID); the MIG lowers its target by as
// many, so none is replaced. An instance already gone or being deleted is
// not asked for again.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, key connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	if _, err := p.managed(ctx, op, groupID); err != nil {
		return err
	}
	managed, err := p.instances(ctx, op, groupID)
	if err != nil {
		return err
	}
	var urls []string
	for _, m := range managed {
		in := instanceOf(m)
		if in.State == connectors.InstanceDeleting {
			continue
		}
		for _, n := range nodeNames {
			if n == in.Name || n == in.ID {
				urls = append(urls, p.instanceURL(in.Name))
				break
			}
		}
	}
	if len(urls) == 0 {
		return nil
	}
	err = p.deleteInstances(ctx, groupID, urls, requestID(key, "delete-instances", groupID, strings.Join(urls, ",")))
	if isNotFound(err) {
		return nil
	}
	return p.classify(op, err)
}
