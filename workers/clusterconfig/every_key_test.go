package clusterconfig_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

var updateGolden = flag.Bool("update-every-key", false, "rewrite testdata/every-key.golden.json from testdata/every-key.yaml")

// The clusters file format is the operators' contract: a file setting
// every key of every provider section decodes strictly, and to the same
// values as the golden file recorded, so a change to a Config struct
// (an embedded common part, a renamed field) cannot rename, drop or add
// a key unnoticed.
func TestEveryKeyDecodesAsBefore(t *testing.T) {
	f, err := clusterconfig.Load(filepath.Join("testdata", "every-key.yaml"))
	require.NoError(t, err)
	got := map[string]any{}
	for _, c := range f.Clusters {
		raw, err := json.Marshal(c.Config())
		require.NoError(t, err, c.ID)
		var section map[string]any
		require.NoError(t, json.Unmarshal(raw, &section), c.ID)
		got[c.Provider] = section
	}
	golden := filepath.Join("testdata", "every-key.golden.json")
	if *updateGolden {
		out, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(golden, append(out, '\n'), 0o644))
	}
	raw, err := os.ReadFile(golden)
	require.NoError(t, err)
	var want map[string]any
	require.NoError(t, json.Unmarshal(raw, &want))
	assert.Equal(t, want, got)
}

// A provider's rules are its Config's Validate, which New runs too: the
// loader names the file, cluster and field of what New alone would have
// refused, at start, before any cluster is built.
func TestLoadReportsWhatNewWouldRefuse(t *testing.T) {
	_, err := load(t, `
clusters:
  - id: g
    provider: gcp
    gcp: {credentials: "env:G", project: p, zone: usc1, image: i}
  - id: l
    provider: lightsail
    lightsail: {credentials: "env:L", region: us-east-1, availabilityZone: eu-west-1a, blueprintID: b, ipAddressType: ipv5}
  - id: a
    provider: aliyun
    aliyun: {credentials: "env:A", regionId: r, imageId: i, securityGroupId: s, vSwitchId: v, protocol: ftp}
  - id: p
    provider: proxmox
    proxmox:
      credentials: env:P
      endpoint: pve1:8006
      targetNodes: ["bad node!"]
      templates: [{name: vm-2c4g, vmid: 9000, node: pve1, cpus: 2, memoryMiB: 4096, hourlyPrice: 0.05}]
  - id: h
    provider: hetzner
    hetzner:
      credentials: env:H
      location: fsn1
      image: ubuntu-24.04
      catalog: [{name: cx22, milliCPU: 2000, memoryBytes: 4294967296, maxPods: 110}, {name: cx22, milliCPU: 2000, memoryBytes: 4294967296, maxPods: 110}]
`)
	got := problemFields(t, err)
	assert.Contains(t, got["g/gcp.zone"], `"usc1" is not a zone`)
	assert.Contains(t, got["l/lightsail.availabilityZone"], "eu-west-1a is not in region us-east-1")
	assert.Contains(t, got["l/lightsail.ipAddressType"], `"ipv5"`)
	assert.Contains(t, got["a/aliyun.protocol"], `"ftp"`)
	assert.Contains(t, got["p/proxmox.endpoint"], "must be the API's URL")
	assert.Contains(t, got["p/proxmox.targetNodes[0]"], "not a Proxmox node name")
	assert.Contains(t, got["h/hetzner.catalog[1].name"], `"cx22" is also catalog[0]`)
	assert.Len(t, got, 7, "%v", got)
}
