package hetzner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// SetTargetSize makes the group hold target servers: it creates the
// missing ones as members of key (ordinals 0, 1, ... by deterministic
// name), or deletes the newest down to target. A retry after a partial
// success finds the members already made and creates only the rest.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = connectors.OpSetTargetSize
	g, err := parseGroupID(groupID)
	if err != nil {
		return errclass.New(errclass.Permanent, ProviderName, op, err)
	}
	servers, err := p.listServers(ctx, op, g.selector())
	if err != nil {
		return err
	}
	live := alive(servers)
	switch {
	case len(live) > target:
		newest := slices.Clone(live)
		slices.Reverse(newest) // listServers sorts oldest first
		return p.deleteServers(ctx, op, newest[:len(live)-target])
	case len(live) < target:
		// Members of key count toward the target; everything else is the
		// rest of the group, which this call leaves alone.
		mine := memberLabels(g, key, target)
		others := len(slices.DeleteFunc(slices.Clone(live), func(s *hcloud.Server) bool { return mine[s.Labels[LabelKey]] }))
		return p.ensureMembers(ctx, op, g, key, target-others, userLabels(live), live)
	default:
		return nil
	}
}

// CreateNodeGroup creates spec.TargetSize servers of spec.Size for the
// pool as members of key and returns the group. Repeating it with the same
// key creates nothing new. spec.Name is not used: a group's name is its ID.
// spec.Labels become server labels (Kubernetes node labels come from the
// cluster-join user data).
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	g, err := validateSpec(spec)
	if err != nil {
		return connectors.NodeGroup{}, errclass.New(errclass.Permanent, ProviderName, op, err)
	}
	servers, err := p.listServers(ctx, op, g.selector())
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	if err := p.ensureMembers(ctx, op, g, key, spec.TargetSize, spec.Labels, alive(servers)); err != nil {
		return connectors.NodeGroup{}, err
	}
	if servers, err = p.listServers(ctx, op, g.selector()); err != nil {
		return connectors.NodeGroup{}, err
	}
	return toNodeGroup(g, servers), nil
}

// validateSpec checks what is Hetzner's own: the size is a server type
// and the labels are ones Hetzner takes. The pool, target and key were
// checked by connectors.Checked, which wraps every provider a worker builds.
func validateSpec(spec connectors.NodeGroupSpec) (group, error) {
	if !serverTypeRE.MatchString(spec.Size) {
		return group{}, fmt.Errorf("spec.size %q must be a server type such as cx22", spec.Size)
	}
	labels := make(map[string]any, len(spec.Labels))
	for k, v := range spec.Labels {
		if strings.HasPrefix(k, "visor-") {
			return group{}, fmt.Errorf("spec.labels: %s is reserved for Visor's own labels", k)
		}
		labels[k] = v
	}
	if _, err := hcloud.ValidateResourceLabels(labels); err != nil {
		return group{}, fmt.Errorf("spec.labels: %w", err)
	}
	return group{nodePoolLabel: spec.Pool.NodePoolLabel(), size: spec.Size}, nil
}

// memberLabels are the LabelKey values of key's first n members.
func memberLabels(g group, key connectors.IdempotencyKey, n int) map[string]bool {
	out := make(map[string]bool, n)
	for i := range n {
		out[g.member(key, i).keyLabel] = true
	}
	return out
}

// userLabels are the oldest server's labels other than Visor's own,
// carried over to the servers a resize adds so the group stays alike.
func userLabels(live []*hcloud.Server) map[string]string {
	out := map[string]string{}
	if len(live) == 0 {
		return out
	}
	for k, v := range live[0].Labels {
		if !strings.HasPrefix(k, "visor-") {
			out[k] = v
		}
	}
	return out
}

// ensureMembers makes key's members 0..n-1 exist, creating those not in live.
func (p *Provider) ensureMembers(ctx context.Context, op string, g group, key connectors.IdempotencyKey, n int, labels map[string]string, live []*hcloud.Server) error {
	have := map[string]bool{}
	for _, s := range live {
		have[s.Labels[LabelKey]] = true
	}
	var base *hcloud.ServerCreateOpts
	for i := range n {
		m := g.member(key, i)
		if have[m.keyLabel] {
			continue
		}
		if base == nil {
			b, err := p.baseCreateOpts(ctx, op, g, labels)
			if err != nil {
				return err
			}
			base = &b
		}
		if err := p.createServer(ctx, op, m, *base); err != nil {
			return err
		}
	}
	return nil
}

// createServer creates one member. A uniqueness_error means the name is
// taken, perhaps by this very member from an attempt whose answer was
// lost: the server is ours if it carries our key label, else the call
// fails for good.
func (p *Provider) createServer(ctx context.Context, op string, m member, base hcloud.ServerCreateOpts) error {
	opts := base
	opts.Name = m.name
	opts.Labels = maps.Clone(base.Labels)
	opts.Labels[LabelKey] = m.keyLabel
	_, resp, err := p.client.Server.Create(ctx, opts)
	if err == nil {
		return nil
	}
	if !hcloud.IsError(err, hcloud.ErrorCodeUniquenessError) {
		return p.classify(op+" "+m.name, resp, err)
	}
	s, resp, lookErr := p.client.Server.GetByName(ctx, m.name)
	if lookErr != nil {
		return p.classify(op+" "+m.name, resp, lookErr)
	}
	if s != nil && s.Labels[LabelKey] == m.keyLabel && s.Labels[LabelPool] == opts.Labels[LabelPool] {
		return nil
	}
	return errclass.New(errclass.Permanent, ProviderName, op+" "+m.name,
		fmt.Errorf("the name is taken by a server this request did not create: %w", err))
}

// baseCreateOpts is what every new server of the group shares; SSH key and
// network names are resolved to the IDs the API wants.
func (p *Provider) baseCreateOpts(ctx context.Context, op string, g group, labels map[string]string) (hcloud.ServerCreateOpts, error) {
	image := &hcloud.Image{Name: p.cfg.Image}
	if id, err := strconv.ParseInt(p.cfg.Image, 10, 64); err == nil {
		image = &hcloud.Image{ID: id}
	}
	opts := hcloud.ServerCreateOpts{
		ServerType:       &hcloud.ServerType{Name: g.size},
		Image:            image,
		Location:         &hcloud.Location{Name: p.cfg.Location},
		UserData:         p.userData,
		StartAfterCreate: new(true),
		Labels:           maps.Clone(labels),
	}
	if opts.Labels == nil {
		opts.Labels = map[string]string{}
	}
	maps.Copy(opts.Labels, g.selector())
	for _, name := range p.cfg.SSHKeys {
		key, resp, err := p.client.SSHKey.GetByName(ctx, name)
		if err != nil {
			return opts, p.classify(op, resp, err)
		}
		if key == nil {
			return opts, errclass.New(errclass.Permanent, ProviderName, op, fmt.Errorf("SSH key %q is not in the project", name))
		}
		opts.SSHKeys = append(opts.SSHKeys, key)
	}
	if p.cfg.Network != "" {
		network, resp, err := p.client.Network.GetByName(ctx, p.cfg.Network)
		if err != nil {
			return opts, p.classify(op, resp, err)
		}
		if network == nil {
			return opts, errclass.New(errclass.Permanent, ProviderName, op, fmt.Errorf("network %q is not in the project", p.cfg.Network))
		}
		opts.Networks = []*hcloud.Network{network}
	}
	return opts, nil
}

// deleteServers deletes servers; one already gone is success.
func (p *Provider) deleteServers(ctx context.Context, op string, servers []*hcloud.Server) error {
	for _, s := range servers {
		_, resp, err := p.client.Server.DeleteWithResult(ctx, s)
		if err := p.classify(op+" "+s.Name, resp, err); err != nil && !errclass.IsNotFound(err) {
			return err
		}
	}
	return nil
}
