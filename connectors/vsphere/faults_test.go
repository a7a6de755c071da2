package vsphere

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// Faults are injected with vcsim's fault injection rules, on the real
// SOAP path, so the connector sees exactly what vCenter would send.

func TestTransientCloneFaultIsRetryableAndRetryConverges(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	p := sim.provider(t)
	pool := testPool("flaky")
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "small"}, "create")
	require.NoError(t, err)

	// One of the two clones meets TaskInProgress.
	sim.addFault("CloneVM_Task", "DC0_C0_RP0_VM0", &types.TaskInProgress{}, 1)
	key := connectors.IdempotencyKey("decision-2")
	err = p.SetTargetSize(ctx, g.ID, 2, key)
	require.Error(t, err)
	assert.Equal(t, errclass.Retryable, errclass.Of(err), "got %v", err)

	require.NoError(t, p.SetTargetSize(ctx, g.ID, 2, key), "the activity's retry")
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Equal(t, 2, groups[0].TargetSize, "exactly the target after a partial failure and retry")
}

func TestCloneFaultClasses(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	p := sim.provider(t)
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: testPool("classes"), Size: "large"}, "create")
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		fault types.BaseMethodFault
		want  errclass.Class
	}{
		"insufficient CPU": {&types.InsufficientCpuResourcesFault{}, errclass.InsufficientCapacity},
		"no permission":    {&types.NoPermission{}, errclass.Permanent},
		"concurrent":       {&types.ConcurrentAccess{}, errclass.Retryable},
		"host down":        {&types.HostCommunication{}, errclass.Retryable},
	} {
		sim.model.Service.ClearFaultRules()
		sim.addFault("CloneVM_Task", "DC0_C0_RP0_VM1", tc.fault, 0)
		err := p.SetTargetSize(ctx, g.ID, 1, connectors.IdempotencyKey("k-"+name))
		assert.Equal(t, tc.want, errclass.Of(err), "%s: %v", name, err)
	}
}

func TestDeletePowersOffThenDestroysAndSurvivesFaults(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	p := sim.provider(t)
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: testPool("del"), Size: "small", TargetSize: 1}, "create")
	require.NoError(t, err)
	node := g.Instances[0].Name
	require.Equal(t, connectors.InstanceRunning, g.Instances[0].State)

	sim.addFault("PowerOffVM_Task", node, &types.TaskInProgress{}, 1)
	err = p.DeleteNodes(ctx, g.ID, []string{node}, "delete")
	assert.Equal(t, errclass.Retryable, errclass.Of(err), "got %v", err)
	assert.True(t, sim.vmExists(t, g.ID, node), "nothing destroyed while power-off failed")

	sim.addFault("Destroy_Task", node, &types.NoPermission{}, 1)
	err = p.DeleteNodes(ctx, g.ID, []string{node}, "delete")
	assert.True(t, errclass.IsPermanent(err), "got %v", err)
	assert.True(t, sim.vmExists(t, g.ID, node))

	// The VM is powered off by now; the retry goes straight to Destroy.
	require.NoError(t, p.DeleteNodes(ctx, g.ID, []string{node}, "delete"))
	assert.False(t, sim.vmExists(t, g.ID, node))
	require.NoError(t, p.DeleteNodes(ctx, g.ID, []string{node}, "delete"), "already gone")
}

func TestExpiredSessionLogsInAgain(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	p := sim.provider(t)
	s, err := p.client.SessionManager.UserSession(ctx)
	require.NoError(t, err)
	require.NotNil(t, s)
	require.NoError(t, sim.admin.SessionManager.TerminateSession(ctx, []string{s.Key}))

	_, err = p.NodeGroups(ctx, testPool("after-expiry"))
	require.NoError(t, err)
	s2, err := p.client.SessionManager.UserSession(ctx)
	require.NoError(t, err)
	require.NotNil(t, s2)
	assert.NotEqual(t, s.Key, s2.Key)
}

// A refused login and an unset reference are the conformance suite's; a
// credential without the user:password form is vSphere's own.
func TestNewRejectsBadCredentialsAndConfig(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)

	t.Setenv("VISOR_TEST_VSPHERE_CREDENTIAL", "no-colon-here")
	_, err := New(ctx, sim.config(), nil)
	assert.True(t, errclass.IsPermanent(err), "got %v", err)
	assert.Contains(t, err.Error(), credEnv)
	assert.NotContains(t, err.Error(), "no-colon-here")

	t.Setenv("VISOR_TEST_VSPHERE_CREDENTIAL", simUser+":"+simPassword)
	for name, tc := range map[string]struct {
		mutate func(*Config)
		want   string
	}{
		"missing folder":   {func(c *Config) { c.Folder = "/DC0/vm/nope" }, "/DC0/vm/nope"},
		"missing template": {func(c *Config) { c.Templates[0].Path = "/DC0/vm/ghost" }, "/DC0/vm/ghost"},
		"wrong shape":      {func(c *Config) { c.Templates[1].CPUs = 8 }, "has 4 CPUs"},
		"size with slash":  {func(c *Config) { c.Templates[0].Name = "a/b" }, "a/b"},
		"no templates":     {func(c *Config) { c.Templates = nil }, "templates: is empty"},
		"no endpoint":      {func(c *Config) { c.Endpoint = "" }, "endpoint: is empty"},
		"bad shape":        {func(c *Config) { c.Templates[0].MemoryMiB = 0 }, "memoryMiB"},
		// vcsim's datacenter has several clusters: no single default pool.
		"ambiguous default pool": {func(c *Config) { c.ResourcePool = "" }, "ResourcePool"},
	} {
		cfg := sim.config()
		tc.mutate(&cfg)
		_, err := New(ctx, cfg, nil)
		assert.True(t, errclass.IsPermanent(err), "%s: %v", name, err)
		if err != nil {
			assert.Contains(t, err.Error(), tc.want, name)
		}
	}
}

func TestClassOfFaults(t *testing.T) {
	cases := map[string]struct {
		fault types.BaseMethodFault
		want  errclass.Class
	}{
		"TaskInProgress":        {&types.TaskInProgress{}, errclass.Retryable},
		"InvalidPowerState":     {&types.InvalidPowerState{}, errclass.Retryable},
		"ResourceInUse":         {&types.ResourceInUse{}, errclass.Retryable},
		"NotAuthenticated":      {&types.NotAuthenticated{}, errclass.Retryable},
		"ManagedObjectNotFound": {&types.ManagedObjectNotFound{}, errclass.NotFound},
		"InsufficientMemory":    {&types.InsufficientMemoryResourcesFault{}, errclass.InsufficientCapacity},
		"InsufficientStorage":   {&types.InsufficientStorageSpace{}, errclass.InsufficientCapacity},
		"InvalidLogin":          {&types.InvalidLogin{}, errclass.Permanent},
		"NoPermission":          {&types.NoPermission{}, errclass.Permanent},
		"InvalidArgument":       {&types.InvalidArgument{}, errclass.Permanent},
		"NotSupported":          {&types.NotSupported{}, errclass.Permanent},
		"DuplicateName":         {&types.DuplicateName{}, errclass.Permanent},
	}
	for name, tc := range cases {
		// As a method (SOAP) fault and as a task's error.
		assert.Equal(t, tc.want, ClassOf(soapFault(tc.fault)), name)
		assert.Equal(t, tc.want, ClassOf(taskFault(tc.fault)), "task "+name)
	}
	assert.Equal(t, errclass.Retryable, ClassOf(errors.New("connection refused")))
}
