package kvm

import (
	"cmp"
	"context"
	"encoding/xml"
	"slices"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// domain is one domain of the host with Visor's metadata, if it has any.
type domain struct {
	dom     libvirt.Domain
	name    string
	running bool
	meta    *nodeMeta
}

func (d domain) Instance() connectors.Instance {
	state := connectors.InstanceCreating // defined, not yet started
	if d.running {
		state = connectors.InstanceRunning
	}
	inst := connectors.Instance{ID: uuidString(d.dom.UUID), Name: d.name, State: state}
	if d.meta != nil {
		inst.CreatedAt, _ = time.Parse(time.RFC3339, d.meta.Created)
	}
	return inst
}

func (d domain) created() string {
	if d.meta == nil {
		return ""
	}
	return d.meta.Created
}

func uuidString(u libvirt.UUID) string {
	h := make([]byte, 0, 36)
	const hexd = "0123456789abcdef"
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			h = append(h, '-')
		}
		h = append(h, hexd[b>>4], hexd[b&15])
	}
	return string(h)
}

// List lists every domain of the host, with Visor's metadata read for
// each, by name.
func (p host) List(ctx context.Context, op string) ([]domain, error) {
	l, err := p.client(op)
	if err != nil {
		return nil, err
	}
	doms, _, err := l.ConnectListAllDomains(1, 0)
	if err != nil {
		return nil, p.classify(op, err)
	}
	out := make([]domain, 0, len(doms))
	for _, dom := range doms {
		if err := ctx.Err(); err != nil {
			return nil, errclass.New(errclass.Retryable, ProviderName, op, err)
		}
		d := domain{dom: dom, name: dom.Name}
		state, _, err := l.DomainGetState(dom, 0)
		if err := p.classify(op, err); err != nil {
			if errclass.IsNotFound(err) { // gone while listing
				continue
			}
			return nil, err
		}
		d.running = libvirt.DomainState(state) == libvirt.DomainRunning
		raw, err := l.DomainGetMetadata(dom, int32(libvirt.DomainMetadataElement), libvirt.OptString{metadataNS}, libvirt.DomainAffectConfig)
		switch err := p.classify(op, err); {
		case err == nil:
			var m nodeMeta
			if xml.Unmarshal([]byte(raw), &m) == nil {
				d.meta = &m
			}
		case !errclass.IsNotFound(err):
			return nil, err
		}
		out = append(out, d)
	}
	// Oldest first, by the definition time Visor recorded.
	slices.SortFunc(out, func(a, b domain) int {
		return cmp.Or(cmp.Compare(a.created(), b.created()), cmp.Compare(a.name, b.name))
	})
	return out, nil
}
