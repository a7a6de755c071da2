package clusterconfig_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// A provider added the way the package comment of connectors promises:
// everything below lives in this file, and the one line that makes the
// worker know it is the Register call.
func init() { connectors.Register(connectors.CloudKind[toyConfig](toyName, newToy, toyCatalog)) }

const toyName = "toyland"

type toyConfig struct {
	Credentials connectors.CredentialRef `json:"credentials"`
	Zone        string                   `json:"zone"`
}

func (c *toyConfig) Validate(p connectors.Problems) {
	connectors.CheckRef(p, "credentials", c.Credentials, true)
	connectors.Required(p, "zone", c.Zone, "a toyland zone")
}

func (c *toyConfig) CredentialRefs() []*connectors.CredentialRef {
	return []*connectors.CredentialRef{&c.Credentials}
}

func toyCatalog() []types.InstanceType {
	return []types.InstanceType{
		{Name: "toy-1", MilliCPU: 1000, Memory: types.GiB, MaxPods: 10, HourlyPrice: 0.01},
		{Name: "toy-4", MilliCPU: 4000, Memory: 4 * types.GiB, MaxPods: 40, HourlyPrice: 0.03},
	}
}

// toyProvider keeps its groups in memory.
type toyProvider struct {
	zone, token string
	groups      []connectors.NodeGroup
}

func newToy(ctx context.Context, cfg toyConfig, secrets connectors.SecretReader) (connectors.Provider, func(context.Context) error, error) {
	token, err := cfg.Credentials.Resolve(ctx, secrets)
	if err != nil {
		return nil, nil, err
	}
	return &toyProvider{zone: cfg.Zone, token: token}, nil, nil
}

func (p *toyProvider) Name() string { return toyName }

func (p *toyProvider) NodeGroups(_ context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	var out []connectors.NodeGroup
	for _, g := range p.groups {
		if g.Labels[types.LabelPool] == pool.NodePoolLabel() {
			out = append(out, g)
		}
	}
	return out, nil
}

func (p *toyProvider) SetTargetSize(_ context.Context, id string, target int, _ connectors.IdempotencyKey) error {
	for i := range p.groups {
		if p.groups[i].ID == id {
			p.groups[i].TargetSize = target
			return nil
		}
	}
	return errclass.New(errclass.NotFound, toyName, connectors.OpSetTargetSize, fmt.Errorf("group %s", id))
}

func (p *toyProvider) CreateNodeGroup(_ context.Context, spec connectors.NodeGroupSpec, _ connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	g := connectors.NodeGroup{
		ID: fmt.Sprintf("%s-%d", p.zone, len(p.groups)), Name: spec.Name, Size: spec.Size, TargetSize: spec.TargetSize,
		Labels: map[string]string{types.LabelPool: spec.Pool.NodePoolLabel()},
	}
	p.groups = append(p.groups, g)
	return g, nil
}

func (p *toyProvider) DeleteNodes(context.Context, string, []string, connectors.IdempotencyKey) error {
	return nil
}

func (p *toyProvider) DeleteNodeGroup(context.Context, string, connectors.IdempotencyKey) error {
	return nil
}

func (p *toyProvider) Catalog(context.Context) ([]types.InstanceType, error) {
	return toyCatalog(), nil
}

func toyFile(t *testing.T, section string) string {
	kubeconfig := writeKubeconfig(t, "toy-1", map[string]string{"toy-1": "https://127.0.0.1:1"})
	return fmt.Sprintf("clusters:\n  - id: toy-1\n    provider: toyland\n    kubeconfig: %s\n%s", kubeconfig, section)
}

func TestToyProviderRegisteredInATestLoadsAndBuilds(t *testing.T) {
	t.Setenv("VISOR_TOY_TOKEN", "toy-secret")
	f := mustLoad(t, toyFile(t, "    toyland: {credentials: \"env:VISOR_TOY_TOKEN\", zone: north}\n"))

	src := newSource(t, f)
	ctx := context.Background()
	c, err := src.Cluster(ctx, "toy-1")
	require.NoError(t, err)
	assert.Equal(t, toyName, c.Provider.Name())
	require.NotNil(t, c.Observer)
	require.NotNil(t, c.Drainer)

	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: toyName, Cluster: "toy-1"}
	g, err := c.Provider.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Name: "api", Size: "toy-1", TargetSize: 2}, "k1")
	require.NoError(t, err)
	assert.Equal(t, "north-0", g.ID, "the toy's constructor got its zone from the file")
	groups, err := c.Provider.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Len(t, groups, 1)

	// The worker wrapped it: the toy never sees an unkeyed call.
	err = c.Provider.SetTargetSize(ctx, g.ID, 3, "")
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "toyland SetTargetSize")
	groups, err = c.Provider.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Equal(t, 2, groups[0].TargetSize, "the refused call changed nothing")

	catalog, err := connectors.CatalogOf(toyName)
	require.NoError(t, err)
	assert.Equal(t, "toy-1", catalog[0].Name)
}

// The toy's catalog reaches the planner with nothing but the registration:
// the plan activity sizes pods against the toy's sizes (four 900m pods fit
// one toy-4 at 0.03 rather than four toy-1 at 0.04), and its built-in
// catalog passes the planner's checks.
func TestToyProviderCatalogReachesThePlanner(t *testing.T) {
	t.Setenv("VISOR_TOY_TOKEN", "toy-secret")
	f := mustLoad(t, toyFile(t, "    toyland: {credentials: \"env:VISOR_TOY_TOKEN\", zone: north}\n"))
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.Activities{Clusters: newSource(t, f)})

	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: toyName, Cluster: "toy-1"}
	var pods []types.PendingPod
	for i := range 4 {
		pods = append(pods, types.PendingPod{Namespace: "shop", Name: fmt.Sprintf("api-%d", i), Org: "acme", Project: "shop", Service: "api",
			Requests: types.Resources{MilliCPU: 900, Memory: 512 * types.MiB, Pods: 1}})
	}
	val, err := env.ExecuteActivity((&activities.Activities{}).PlanScaleUp, activities.PlanInput{Key: pool, Pods: pods, MaxNewNodes: 10})
	require.NoError(t, err)
	var plan activities.PlanResult
	require.NoError(t, val.Get(&plan))
	assert.Equal(t, "toy-4", plan.Size)
	assert.Equal(t, 1, plan.NewNodes)
	assert.InDelta(t, 0.03, plan.HourlyCost, 1e-9)
	assert.ElementsMatch(t, []string{"toy-1", "toy-4"}, slices.Collect(maps.Keys(plan.SizePrice)))

	_, err = env.ExecuteActivity((&activities.Activities{}).PlanScaleUp, activities.PlanInput{Key: pool, Pods: pods, AllowedSizes: []string{"toy-9"}, MaxNewNodes: 10})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "toy-9")

	catalog, err := connectors.CatalogOf(toyName)
	require.NoError(t, err)
	require.NoError(t, sizing.CheckCatalog(catalog))
}

func TestToyProviderSectionIsValidatedAndStrict(t *testing.T) {
	_, err := load(t, toyFile(t, "    toyland: {credentials: \"pasted-secret\"}\n"))
	fields := problemFields(t, err)
	assert.Contains(t, fields, "toy-1/toyland.credentials")
	assert.Contains(t, fields, "toy-1/toyland.zone")
	assert.NotContains(t, err.Error(), "pasted-secret")

	_, err = load(t, toyFile(t, "    toyland: {credentials: \"env:X\", zone: north, colour: red}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown field "colour"`)

	_, err = load(t, toyFile(t, ""))
	assert.Contains(t, problemFields(t, err), "toy-1/toyland")
}
