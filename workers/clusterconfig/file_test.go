package clusterconfig_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/aws"
	"github.com/hanzoai/visor-fleet/connectors/digitalocean"
	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

// problemFields maps "index/field" of every problem in err.
func problemFields(t *testing.T, err error) map[string]string {
	t.Helper()
	var fe *clusterconfig.FileError
	require.True(t, errors.As(err, &fe), "want *FileError, got %v", err)
	out := map[string]string{}
	for _, p := range fe.Problems {
		out[p.Cluster+"/"+p.Field] = p.Message
	}
	return out
}

func TestLoadReportsEveryProblemByClusterAndField(t *testing.T) {
	_, err := load(t, `
clusters:
  - id: do-ams3
    provider: digitalocean
    kubeContext: admin
    digitalocean: {credentials: "env:DO_TOKEN"}
  - id: Bad_ID
    provider: openstack
  - id: eks-1
    provider: aws
    aws: {credentials: "secret:visor/aws", region: "", mode: eks}
  - id: do-ams3
    provider: hetzner
    hetzner: {credentials: "env:HC", location: fsn1}
    digitalocean: {credentials: "env:DO_TOKEN", clusterID: x}
  - id: vs
    provider: vsphere
    vsphere:
      credentials: env:VC
      endpoint: vc.example
      folder: /dc/vm/visor
      templates: [{name: small, cpus: 2, memoryMiB: 4096, hourlyPrice: 0.1}]
  - id: lab
    provider: sim
    kubeconfig: /etc/kube
    sim: {tick: "-1s", faults: {retryableRate: 1.5}}
`)
	require.Error(t, err)
	got := problemFields(t, err)
	for _, want := range []string{
		"do-ams3/digitalocean.clusterID",
		"do-ams3/kubeContext",
		"Bad_ID/id",
		"Bad_ID/provider",
		"eks-1/aws.credentials",
		"eks-1/aws.region",
		"eks-1/aws.clusterName",
		"do-ams3/id", // the second do-ams3
		"do-ams3/hetzner.image",
		"do-ams3/digitalocean",
		"vs/vsphere.templates[0].path",
		"lab/kubeconfig",
		"lab/sim.tick",
		"lab/sim.faults.retryableRate",
	} {
		assert.Contains(t, got, want)
	}
	assert.Len(t, got, 14, "no problems beyond the ones planted: %v", got)
	assert.Contains(t, got["Bad_ID/provider"], "digitalocean, aws, hetzner, vsphere, azure, kwok, sim")
	assert.Contains(t, got["eks-1/aws.credentials"], "secret:NAMESPACE/NAME/KEY")

	// One line per problem, each naming the file, the cluster and the field.
	msg := err.Error()
	assert.Contains(t, msg, `clusters.yaml: clusters[0] (id "do-ams3"): digitalocean.clusterID: is empty`)
	assert.Contains(t, msg, `clusters.yaml: clusters[3] (id "do-ams3"): id: cluster "do-ams3" is also clusters[0]`)
}

func TestLoadIsStrict(t *testing.T) {
	_, err := load(t, `
clusters:
  - id: do-ams3
    provider: digitalocean
    digitalocean: {credentials: "env:DO_TOKEN", clusterID: abc, token: "x"}
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `clusters.yaml: clusters[0] (id "do-ams3"): `)
	assert.Contains(t, err.Error(), `unknown field "token"`)

	_, err = load(t, `
clusters:
  - id: lab
    provider: sim
  - id: eks-1
    provider: aws
    aws: {credentials: "env:K", region: eu-west-1, mode: asg, subnets: subnet-1}
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `clusters.yaml: clusters[1] (id "eks-1"): `)
	assert.Contains(t, err.Error(), "subnets")

	_, err = load(t, "clusters: []\n")
	assert.Contains(t, problemFields(t, err), "/clusters")
}

func TestLoadNeverEchoesAPastedSecret(t *testing.T) {
	const pasted = "dop_v1_0123456789abcdef"
	_, err := load(t, `
clusters:
  - id: do-ams3
    provider: digitalocean
    digitalocean: {credentials: "`+pasted+`", clusterID: abc}
`)
	require.Error(t, err)
	assert.Contains(t, problemFields(t, err), "do-ams3/digitalocean.credentials")
	assert.NotContains(t, err.Error(), pasted)
}

func TestLoadAnchorsRelativePathsAtTheFile(t *testing.T) {
	f, err := load(t, `
clusters:
  - id: do-ams3
    provider: digitalocean
    kubeconfig: kube/do-ams3.yaml
    digitalocean: {credentials: "file:tokens/do", clusterID: abc}
  - id: eks-1
    provider: aws
    kubeconfig: /abs/kubeconfig
    aws: {credentials: "env:AWS_KEYS", region: eu-west-1, mode: asg}
  - id: lab
    provider: sim
    sim: {statePath: state/lab.json}
`)
	require.NoError(t, err)
	dir := filepath.Dir(f.Path)
	assert.Equal(t, filepath.Join(dir, "kube/do-ams3.yaml"), f.Clusters[0].Kubeconfig)
	assert.Equal(t, "file:"+filepath.Join(dir, "tokens/do"), string(f.Clusters[0].Config().(*digitalocean.Config).Credentials))
	assert.Equal(t, "/abs/kubeconfig", f.Clusters[1].Kubeconfig)
	assert.Equal(t, "env:AWS_KEYS", string(f.Clusters[1].Config().(*aws.Config).Credentials))
	assert.Equal(t, aws.ModeASG, f.Clusters[1].Config().(*aws.Config).Mode)
	assert.Equal(t, filepath.Join(dir, "state/lab.json"), f.Clusters[2].Config().(*clusterconfig.SimConfig).StatePath)
}

func TestLoadMissingFileNamesIt(t *testing.T) {
	_, err := clusterconfig.Load(filepath.Join(t.TempDir(), "nope.yaml"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nope.yaml")
}

// The documented example must stay a valid file.
func TestExampleFileLoads(t *testing.T) {
	f, err := clusterconfig.Load(filepath.Join("..", "..", "deploy", "worker-clusters.example.yaml"))
	require.NoError(t, err)
	kinds := map[string]bool{}
	for _, c := range f.Clusters {
		kinds[c.Provider] = true
	}
	for _, k := range clusterconfig.Providers {
		assert.True(t, kinds[k], "the example shows no %s cluster", k)
	}
}

func TestLoadReadsThePlatformsOrgLimits(t *testing.T) {
	f, err := load(t, `
clusters:
  - {id: lab, provider: sim}
orgs:
  - {org: acme, maxNodes: 40, maxNodesPerCluster: 10, maxHourlyCost: 25}
  - {org: globex, maxNodes: 5}
`)
	require.NoError(t, err)
	lim := f.OrgLimits()
	require.Len(t, lim, 2)
	assert.Equal(t, 10, lim["acme"].MaxNodesPerCluster)
	assert.Equal(t, 5, lim["globex"].MaxNodes)

	_, err = load(t, `
clusters:
  - {id: lab, provider: sim}
orgs:
  - {org: acme, maxNodes: 5}
  - {org: acme, maxNodes: 6}
  - {org: globex, maxNodes: 4, maxNodesPerCluster: 10}
`)
	got := problemFields(t, err)
	assert.Len(t, got, 2)
	assert.Contains(t, got["/orgs[1]"], `org "acme" is also orgs[0]`)
	assert.Contains(t, got["/orgs[2]"], "maxNodesPerCluster: 10 is greater than maxNodes 4")
}
