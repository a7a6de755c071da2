package vsphere

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVMName(t *testing.T) {
	label := "acme.shop.web.vsphere"
	name := VMName(label, "small", "k1", 0)
	assert.Equal(t, name, VMName(label, "small", "k1", 0), "deterministic")
	assert.Regexp(t, `^acme-shop-web-vsphere-small-[0-9a-f]{6}-0$`, name)
	assert.NotEqual(t, name, VMName(label, "small", "k2", 0), "differs by key")
	assert.NotEqual(t, name, VMName(label, "small", "k1", 1), "differs by ordinal")
	assert.NotEqual(t, name, VMName(label, "large", "k1", 0), "differs by size")

	long := strings.Repeat("o", 63) + "." + strings.Repeat("p", 63) + ".s.vsphere"
	a, b := VMName(long, "Big_Size", "k1", 12), VMName(long, "Big_Size", "k2", 12)
	assert.LessOrEqual(t, len(a), maxVMNameLen)
	assert.Regexp(t, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, a, "a DNS label")
	assert.NotEqual(t, a, b, "truncation keeps key and ordinal")
	assert.True(t, strings.HasSuffix(a, "-12"))
}

func TestGroupIDRoundTrip(t *testing.T) {
	label, size, err := parseGroupID(GroupID("acme.shop.web.vsphere", "large"))
	require.NoError(t, err)
	assert.Equal(t, "acme.shop.web.vsphere", label)
	assert.Equal(t, "large", size)
	for _, bad := range []string{"", "nosize", "acme.shop.web.vsphere/", "acme.shop.web/large", "acme.shop.web.vsphere/a/b", "ACME.shop.web.vsphere/large"} {
		_, _, err := parseGroupID(bad)
		assert.Error(t, err, "%q", bad)
	}
}
