package vsphere

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// connect builds the SOAP client and logs in; the password travels only
// in p.userinfo, never in errors.
func (p *Provider) connect(ctx context.Context, u *url.URL) error {
	vc, err := vim25.NewClient(ctx, soap.NewClient(u, p.cfg.Insecure))
	if err != nil {
		return p.classify("New: connect", err)
	}
	p.client = &govmomi.Client{Client: vc, SessionManager: session.NewManager(vc)}
	return p.login(ctx)
}

func (p *Provider) login(ctx context.Context) error {
	err := p.client.SessionManager.Login(ctx, p.userinfo)
	if err == nil {
		return nil
	}
	if fault.Is(err, &types.InvalidLogin{}) {
		return invalid("login", fmt.Errorf("vCenter rejected credential %s", p.cfg.Credentials))
	}
	return p.classify("login", err)
}

// ensureSession logs in again when vCenter has dropped the session (idle
// timeout, restart), so a long-lived worker's provider keeps working.
func (p *Provider) ensureSession(ctx context.Context) error {
	p.sessionMu.Lock()
	defer p.sessionMu.Unlock()
	s, err := p.client.SessionManager.UserSession(ctx)
	if err != nil {
		return p.classify("session", err)
	}
	if s != nil {
		return nil
	}
	return p.login(ctx)
}

// resolveInventory finds the datacenter, base folder, resource pool,
// datastore and every template, and checks each template's hardware
// against its configured shape.
func (p *Provider) resolveInventory(ctx context.Context) error {
	const op = "New"
	p.finder = find.NewFinder(p.client.Client, false)
	dc, err := p.finder.DatacenterOrDefault(ctx, p.cfg.Datacenter)
	if err != nil {
		return p.notConfigured(op, "Datacenter", p.cfg.Datacenter, err)
	}
	p.finder.SetDatacenter(dc)
	if p.folder, err = p.finder.Folder(ctx, p.cfg.Folder); err != nil {
		return p.notConfigured(op, "Folder", p.cfg.Folder, err)
	}
	if p.pool, err = p.finder.ResourcePoolOrDefault(ctx, p.cfg.ResourcePool); err != nil {
		return p.notConfigured(op, "ResourcePool", p.cfg.ResourcePool, err)
	}
	if p.cfg.Datastore != "" {
		if p.datastore, err = p.finder.Datastore(ctx, p.cfg.Datastore); err != nil {
			return p.notConfigured(op, "Datastore", p.cfg.Datastore, err)
		}
	}
	p.templates = make(map[string]*object.VirtualMachine, len(p.cfg.Templates))
	for _, t := range p.cfg.Templates {
		vm, err := p.finder.VirtualMachine(ctx, t.Path)
		if err != nil {
			return p.notConfigured(op, "template "+t.Name, t.Path, err)
		}
		var hw mo.VirtualMachine
		if err := property.DefaultCollector(p.client.Client).RetrieveOne(ctx, vm.Reference(), []string{"config.hardware"}, &hw); err != nil {
			return p.classify(op+": template "+t.Path, err)
		}
		if hw.Config == nil {
			return invalid(op, fmt.Errorf("template %q (%s) has no configuration", t.Name, t.Path))
		}
		if got := hw.Config.Hardware; int64(got.NumCPU) != t.CPUs || int64(got.MemoryMB) != t.MemoryMiB {
			return invalid(op, fmt.Errorf("template %q (%s) has %d CPUs and %d MiB, but is configured as %d CPUs and %d MiB",
				t.Name, t.Path, got.NumCPU, got.MemoryMB, t.CPUs, t.MemoryMiB))
		}
		p.templates[t.Name] = vm
	}
	return nil
}

// notConfigured: a configured path that does not resolve is the
// operator's to fix, so Permanent; other failures keep their class.
func (p *Provider) notConfigured(op, field, path string, err error) error {
	if isFinderMiss(err) {
		return invalid(op, fmt.Errorf("%s %q: %w", field, path, err))
	}
	return p.classify(op+": "+field, err)
}

func isFinderMiss(err error) bool {
	var nf *find.NotFoundError
	var dnf *find.DefaultNotFoundError
	var mf *find.MultipleFoundError
	var dmf *find.DefaultMultipleFoundError // an empty name matched several
	return errors.As(err, &nf) || errors.As(err, &dnf) || errors.As(err, &mf) || errors.As(err, &dmf)
}
