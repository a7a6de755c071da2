package kvm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/digitalocean/go-libvirt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kvm"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/testsuite/libvirtd"
	"github.com/hanzoai/visor-fleet/types"
)

var pool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "kvm", Cluster: "rack2"}

var groupID = kvm.GroupID(pool.NodePoolLabel(), "small")

// host is a real libvirtd serving libvirt's test driver, with a template
// domain "tpl-small" (2 vCPUs, 4 GiB, a 10 GiB volume disk in the test
// driver's default-pool, a NIC on its default network). The returned
// connection stays open, so the driver's state lasts the whole test.
func host(t *testing.T) (string, *libvirt.Libvirt) {
	t.Helper()
	sock := libvirtd.Start(t)
	l := libvirtd.Keep(t, sock, libvirtd.TestURI)
	pool, err := l.StoragePoolLookupByName("default-pool")
	require.NoError(t, err)
	_, err = l.StorageVolCreateXML(pool, `<volume><name>tpl-small.img</name><capacity unit='GiB'>10</capacity></volume>`, 0)
	require.NoError(t, err)
	_, err = l.DomainDefineXML(`<domain type='test'><name>tpl-small</name><memory unit='MiB'>4096</memory><vcpu>2</vcpu>
<os><type arch='x86_64'>hvm</type></os>
<devices><disk type='volume' device='disk'><source pool='default-pool' volume='tpl-small.img'/><target dev='vda' bus='virtio'/></disk>
<interface type='network'><mac address='52:54:00:aa:bb:01'/><source network='default'/></interface></devices></domain>`)
	require.NoError(t, err)
	return sock, l
}

func config(sock string) kvm.Config {
	return kvm.Config{URI: libvirtd.TestURI, Socket: sock, Templates: []kvm.Template{{
		Shape:  sizing.Shape{Name: "small", CPUs: 2, MemoryMiB: 4096, DiskGiB: 10, HourlyPrice: 0.03, PriceDate: "2026-12"},
		Domain: "tpl-small",
	}}}
}

func newProvider(t *testing.T, sock string) connectors.Provider {
	t.Helper()
	p, err := kvm.New(context.Background(), config(sock), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return connectors.Checked(p)
}

// poolDomains are the host's domains other than the test driver's own
// "test" and the template.
func poolDomains(t *testing.T, l *libvirt.Libvirt) map[string]bool {
	t.Helper()
	doms, _, err := l.ConnectListAllDomains(1, 0)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, d := range doms {
		if d.Name == "test" || d.Name == "tpl-small" {
			continue
		}
		state, _, err := l.DomainGetState(d, 0)
		require.NoError(t, err)
		out[d.Name] = libvirt.DomainState(state) == libvirt.DomainRunning
	}
	return out
}

func volumes(t *testing.T, l *libvirt.Libvirt) []string {
	t.Helper()
	pool, err := l.StoragePoolLookupByName("default-pool")
	require.NoError(t, err)
	vols, _, err := l.StoragePoolListAllVolumes(pool, 1, 0)
	require.NoError(t, err)
	var names []string
	for _, v := range vols {
		names = append(names, v.Name)
	}
	return names
}

func TestDomainsAreDefinedFromTheTemplateTaggedAndStartedOnce(t *testing.T) {
	sock, l := host(t)
	p := newProvider(t, sock)
	ctx := context.Background()

	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "small", TargetSize: 2}, "pool/acme/decision-1")
	require.NoError(t, err)
	assert.Equal(t, groupID, g.ID)
	require.Len(t, g.Instances, 2)
	doms := poolDomains(t, l)
	require.Len(t, doms, 2)
	for _, inst := range g.Instances {
		assert.True(t, doms[inst.Name], "%s is running", inst.Name)
		assert.Equal(t, connectors.InstanceRunning, inst.State)
		assert.False(t, inst.CreatedAt.IsZero())
		d, err := l.DomainLookupByName(inst.Name)
		require.NoError(t, err)
		meta, err := l.DomainGetMetadata(d, int32(libvirt.DomainMetadataElement), libvirt.OptString{"https://hanzo.ai/visor-fleet/kvm/1"}, libvirt.DomainAffectConfig)
		require.NoError(t, err)
		assert.Contains(t, meta, "<pool>"+pool.NodePoolLabel()+"</pool>")
		desc, err := l.DomainGetXMLDesc(d, 0)
		require.NoError(t, err)
		assert.Contains(t, desc, "volume='"+inst.Name+"-disk0'", "its own copy of the template's disk")
		assert.NotContains(t, desc, "52:54:00:aa:bb:01", "its own MAC")
	}
	assert.Len(t, volumes(t, l), 3, "the template's volume and one copy each")

	// The same decision from another worker (a second connection to the
	// same daemon): libvirt's unique names make it find the same domains.
	again, err := newProvider(t, sock).CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "small", TargetSize: 2}, "pool/acme/decision-1")
	require.NoError(t, err)
	assert.ElementsMatch(t, g.Instances, again.Instances)
	assert.Len(t, poolDomains(t, l), 2)
}

func TestScaleDownDestroysUndefinesAndDeletesTheCopiedDisk(t *testing.T) {
	sock, l := host(t)
	p := newProvider(t, sock)
	ctx := context.Background()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 3, "up"))
	require.Len(t, poolDomains(t, l), 3)
	g, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	newest := g[0].Instances[2]

	require.NoError(t, p.SetTargetSize(ctx, groupID, 2, "down"))
	doms := poolDomains(t, l)
	assert.Len(t, doms, 2)
	assert.NotContains(t, doms, newest.Name, "the newest went")
	assert.NotContains(t, volumes(t, l), newest.Name+"-disk0")

	left := g[0].Instances[:2]
	require.NoError(t, p.DeleteNodes(ctx, groupID, []string{left[0].Name, left[1].ID, "gone"}, "del"))
	assert.Empty(t, poolDomains(t, l))
	assert.Equal(t, []string{"tpl-small.img"}, volumes(t, l))
}

func TestBadTemplatesAndArgumentsAreRefusedNamed(t *testing.T) {
	sock, l := host(t)
	ctx := context.Background()
	cfg := config(sock)
	cfg.Templates[0].Domain = "no-such-template"
	_, err := kvm.New(ctx, cfg, nil)
	assert.True(t, errclass.IsNotFound(err), "%v", err)
	assert.Contains(t, err.Error(), "no-such-template")

	cfg = config(sock)
	cfg.Templates[0].CPUs = 4
	_, err = kvm.New(ctx, cfg, nil)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "has 2 vCPUs")

	p := connectors.Checked(newProvider(t, sock)) // as every worker builds it
	for _, err := range []error{
		p.SetTargetSize(ctx, "acme.shop.api.kvm/large", 1, "k"),
		p.SetTargetSize(ctx, "nope", 1, "k"),
		p.SetTargetSize(ctx, groupID, 1, ""),
	} {
		assert.True(t, errclass.IsPermanent(err), "%v", err)
	}
	assert.Empty(t, poolDomains(t, l))
}

func TestLeaksAreThePoolsDomainsOfNoConfiguredSize(t *testing.T) {
	sock, l := host(t)
	p := newProvider(t, sock)
	lf := p.(connectors.LeakFinder)
	ctx := context.Background()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 1, "k"))
	_, err := l.DomainDefineXML(`<domain type='test'><name>retired-size</name><memory unit='MiB'>1024</memory><vcpu>1</vcpu><os><type>hvm</type></os>
<metadata><visor:node xmlns:visor="https://hanzo.ai/visor-fleet/kvm/1"><pool>` + pool.NodePoolLabel() + `</pool><size>gone</size><key>x</key></visor:node></metadata></domain>`)
	require.NoError(t, err)
	leaks, err := lf.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	require.Len(t, leaks, 1)
	assert.Equal(t, "retired-size", leaks[0].Name)

	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	member := groups[0].Instances[0]
	err = lf.DeleteInstances(ctx, pool, []string{leaks[0].ID, member.ID}, "gc")
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Len(t, poolDomains(t, l), 2)
	require.NoError(t, lf.DeleteInstances(ctx, pool, []string{leaks[0].ID}, "gc"))
	doms := poolDomains(t, l)
	assert.Len(t, doms, 1)
	assert.True(t, strings.HasPrefix(member.Name, "v"))
	assert.Contains(t, doms, member.Name)
}
