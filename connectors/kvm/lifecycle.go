package kvm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// templateDomain reads a template's inactive definition and checks its
// hardware against the configured shape.
func (p *Provider) templateDomain(_ context.Context, op string, t Template) (*libvirtxml.Domain, error) {
	l, err := p.client(op)
	if err != nil {
		return nil, err
	}
	dom, err := l.DomainLookupByName(t.Domain)
	if err != nil {
		return nil, p.classify(op+" template "+t.Domain, err)
	}
	raw, err := l.DomainGetXMLDesc(dom, libvirt.DomainXMLInactive)
	if err != nil {
		return nil, p.classify(op+" template "+t.Domain, err)
	}
	def := &libvirtxml.Domain{}
	if err := def.Unmarshal(raw); err != nil {
		return nil, invalid(op, fmt.Errorf("template %s: %w", t.Domain, err))
	}
	var vcpus int64
	if def.VCPU != nil {
		vcpus = int64(def.VCPU.Value)
	}
	if vcpus != t.CPUs || memoryMiB(def) != t.MemoryMiB {
		return nil, invalid(op, fmt.Errorf("template %s has %d vCPUs and %d MiB; size %q says %d and %d", t.Domain, vcpus, memoryMiB(def), t.Name, t.CPUs, t.MemoryMiB))
	}
	return def, nil
}

func memoryMiB(d *libvirtxml.Domain) int64 {
	if d.Memory == nil {
		return 0
	}
	v := int64(d.Memory.Value)
	switch d.Memory.Unit {
	case "", "KiB", "k":
		return v / 1024
	case "MiB", "M":
		return v
	case "GiB", "G":
		return v * 1024
	case "b", "bytes":
		return v >> 20
	}
	return 0
}

// Ensure makes key's ordinal-th member exist (defined from its template,
// volume disks cloned) and running. An existing domain of its name is the member
// when its metadata says so, left by an attempt whose answer was lost: it
// is only started. Any other domain of that name is a conflict.
func (p host) Ensure(ctx context.Context, op string, g poolgroup.Group, key connectors.IdempotencyKey, ordinal int, existing []domain) error {
	m := newMember(g, key, ordinal)
	op = op + " " + m.name
	l, err := p.client(op)
	if err != nil {
		return err
	}
	for _, d := range existing {
		if d.name != m.name {
			continue
		}
		if d.meta == nil || d.meta.Key != m.meta.Key {
			return invalid(op, fmt.Errorf("domain %s exists and is not this decision's", m.name))
		}
		return p.startOrRemove(op, l, d)
	}
	def, err := p.templateDomain(ctx, op, p.templates[g.Size])
	if err != nil {
		return err
	}
	def.Name, def.UUID, def.ID = m.name, m.uuid, nil
	meta := m.meta
	meta.Created = time.Now().UTC().Format(time.RFC3339)
	def.Metadata = &libvirtxml.DomainMetadata{XML: meta.xml()}
	if def.Devices != nil {
		for i := range def.Devices.Interfaces {
			def.Devices.Interfaces[i].MAC = nil // libvirt gives each clone its own
		}
		for i := range def.Devices.Disks {
			if err := p.cloneDisk(op, l, m.name, i, &def.Devices.Disks[i]); err != nil {
				return err
			}
		}
	}
	raw, err := def.Marshal()
	if err != nil {
		return invalid(op, err)
	}
	dom, err := l.DomainDefineXML(raw)
	if err != nil {
		return p.classify(op+" define", err)
	}
	return p.startOrRemove(op, l, domain{dom: dom, name: m.name})
}

// startOrRemove starts a member; one the host has no room to start (QEMU
// cannot have its memory) is undefined with its disk copies, so a create
// refused for capacity leaves no stopped domain behind when sizing falls
// back to another size.
func (p *Provider) startOrRemove(op string, l *libvirt.Libvirt, d domain) error {
	err := p.start(op, l, d)
	if !errclass.IsInsufficientCapacity(err) {
		return err
	}
	if rmErr := p.destroy(op+" remove unstartable", d); rmErr != nil {
		return errors.Join(err, rmErr)
	}
	return err
}

// cloneDisk gives a clone its own copy of a template's volume disk, named
// for the clone, so a retry finds the copy it already made. Disks that are
// not storage volumes (a CD-ROM, a shared read-only image) stay shared.
func (p *Provider) cloneDisk(op string, l *libvirt.Libvirt, name string, i int, disk *libvirtxml.DomainDisk) error {
	if disk.Source == nil || disk.Source.Volume == nil || disk.Device == "cdrom" {
		return nil
	}
	src := disk.Source.Volume
	pool, err := l.StoragePoolLookupByName(src.Pool)
	if err != nil {
		return p.classify(op+" storage pool "+src.Pool, err)
	}
	vol, err := l.StorageVolLookupByName(pool, src.Volume)
	if err != nil {
		return p.classify(op+" volume "+src.Volume, err)
	}
	raw, err := l.StorageVolGetXMLDesc(vol, 0)
	if err != nil {
		return p.classify(op, err)
	}
	v := &libvirtxml.StorageVolume{}
	if err := v.Unmarshal(raw); err != nil {
		return invalid(op, err)
	}
	clone := fmt.Sprintf("%s-disk%d", name, i)
	v.Name, v.Key, v.Target = clone, "", nil
	if v.Allocation != nil {
		v.Allocation = nil
	}
	cloneXML, err := v.Marshal()
	if err != nil {
		return invalid(op, err)
	}
	if _, err := l.StorageVolCreateXMLFrom(pool, cloneXML, vol, 0); err != nil {
		var le libvirt.Error
		if !errors.As(err, &le) || libvirt.ErrorNumber(le.Code) != libvirt.ErrStorageVolExist {
			return p.classify(op+" clone volume "+src.Volume, err)
		}
	}
	disk.Source.Volume = &libvirtxml.DomainDiskSourceVolume{Pool: src.Pool, Volume: clone}
	return nil
}

func (p *Provider) start(op string, l *libvirt.Libvirt, d domain) error {
	if d.running {
		return nil
	}
	state, _, err := l.DomainGetState(d.dom, 0)
	if err != nil {
		return p.classify(op, err)
	}
	if libvirt.DomainState(state) == libvirt.DomainRunning {
		return nil
	}
	return p.classify(op+" start", l.DomainCreate(d.dom))
}

// destroy powers a domain off (hard: it has been drained, or never
// joined), undefines it and deletes the volumes cloned for it. A domain
// already gone is success.
func (p *Provider) destroy(op string, d domain) error {
	op = op + " " + d.name
	l, err := p.client(op)
	if err != nil {
		return err
	}
	raw, err := l.DomainGetXMLDesc(d.dom, libvirt.DomainXMLInactive)
	if err := p.classify(op, err); err != nil {
		if errclass.IsNotFound(err) {
			return nil
		}
		return err
	}
	def := &libvirtxml.Domain{}
	_ = def.Unmarshal(raw)
	if err := l.DomainDestroy(d.dom); err != nil {
		var le libvirt.Error
		if !errors.As(err, &le) || libvirt.ErrorNumber(le.Code) != libvirt.ErrOperationInvalid { // not running
			if err := p.classify(op+" destroy", err); !errclass.IsNotFound(err) {
				return err
			}
		}
	}
	if err := p.classify(op+" undefine", l.DomainUndefineFlags(d.dom, libvirt.DomainUndefineManagedSave|libvirt.DomainUndefineSnapshotsMetadata)); err != nil && !errclass.IsNotFound(err) {
		return err
	}
	if def.Devices == nil {
		return nil
	}
	for i, disk := range def.Devices.Disks {
		if disk.Source == nil || disk.Source.Volume == nil || disk.Source.Volume.Volume != fmt.Sprintf("%s-disk%d", d.name, i) {
			continue // not a copy made for this domain
		}
		pool, err := l.StoragePoolLookupByName(disk.Source.Volume.Pool)
		if err != nil {
			continue
		}
		if vol, err := l.StorageVolLookupByName(pool, disk.Source.Volume.Volume); err == nil {
			if err := p.classify(op+" delete volume", l.StorageVolDelete(vol, 0)); err != nil && !errclass.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

func (p host) Destroy(_ context.Context, op string, doms []domain) error {
	var errs []error
	for _, d := range doms {
		errs = append(errs, p.destroy(op, d))
	}
	return errors.Join(errs...)
}
