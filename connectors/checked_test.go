package connectors_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// recorder counts the calls that reach it.
type recorder struct{ calls int }

func (r *recorder) Name() string { return "rec" }
func (r *recorder) NodeGroups(context.Context, types.PoolKey) ([]connectors.NodeGroup, error) {
	r.calls++
	return nil, nil
}
func (r *recorder) SetTargetSize(context.Context, string, int, connectors.IdempotencyKey) error {
	r.calls++
	return nil
}
func (r *recorder) CreateNodeGroup(context.Context, connectors.NodeGroupSpec, connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	r.calls++
	return connectors.NodeGroup{ID: "g"}, nil
}
func (r *recorder) DeleteNodes(context.Context, string, []string, connectors.IdempotencyKey) error {
	r.calls++
	return nil
}
func (r *recorder) DeleteNodeGroup(context.Context, string, connectors.IdempotencyKey) error {
	r.calls++
	return nil
}
func (r *recorder) Catalog(context.Context) ([]types.InstanceType, error) {
	return []types.InstanceType{{Name: "s"}}, nil
}

type leakyRecorder struct{ recorder }

func (r *leakyRecorder) LeakedInstances(context.Context, types.PoolKey) ([]connectors.Instance, error) {
	r.calls++
	return nil, nil
}
func (r *leakyRecorder) DeleteInstances(context.Context, types.PoolKey, []string, connectors.IdempotencyKey) error {
	r.calls++
	return nil
}

var pool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "rec", Cluster: "c1"}

func TestCheckedRefusesBadArgumentsBeforeTheProvider(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	p := connectors.Checked(rec)
	spec := connectors.NodeGroupSpec{Pool: pool, Name: "api", Size: "s", TargetSize: 1}
	for _, c := range []struct {
		op, want string
		call     func() error
	}{
		{"SetTargetSize", "idempotency key is empty", func() error { return p.SetTargetSize(ctx, "g", 1, "") }},
		{"SetTargetSize", "group ID is empty", func() error { return p.SetTargetSize(ctx, "", 1, "k") }},
		{"SetTargetSize", "target -1 is outside [0, 5000]", func() error { return p.SetTargetSize(ctx, "g", -1, "k") }},
		{"SetTargetSize", "target 5001 is outside", func() error { return p.SetTargetSize(ctx, "g", connectors.MaxTargetSize+1, "k") }},
		{"CreateNodeGroup", "idempotency key is empty", func() error { _, err := p.CreateNodeGroup(ctx, spec, ""); return err }},
		{"CreateNodeGroup", "spec.size is empty", func() error {
			s := spec
			s.Size = ""
			_, err := p.CreateNodeGroup(ctx, s, "k")
			return err
		}},
		{"CreateNodeGroup", "spec.pool", func() error {
			s := spec
			s.Pool.Org = "Not A Label"
			_, err := p.CreateNodeGroup(ctx, s, "k")
			return err
		}},
		{"CreateNodeGroup", `spec.size: rec does not sell size "m5.huge"`, func() error {
			s := spec
			s.Size = "m5.huge"
			_, err := p.CreateNodeGroup(ctx, s, "k")
			return err
		}},
		{"CreateNodeGroup", `spec.labels["bad key!"]: key`, func() error {
			s := spec
			s.Labels = map[string]string{"bad key!": "v"}
			_, err := p.CreateNodeGroup(ctx, s, "k")
			return err
		}},
		{"CreateNodeGroup", "spec.taints[0].effect", func() error {
			s := spec
			s.Taints = []types.Taint{{Key: "x", Effect: "Sometimes"}}
			_, err := p.CreateNodeGroup(ctx, s, "k")
			return err
		}},
		{"CreateNodeGroup", `spec.labels["hanzo.ai/org"] is "globex" but the pool's is "acme"`, func() error {
			s := spec
			s.Labels = map[string]string{types.LabelOrg: "globex"}
			_, err := p.CreateNodeGroup(ctx, s, "k")
			return err
		}},
		{"DeleteNodes", "node name [1] is empty", func() error { return p.DeleteNodes(ctx, "g", []string{"n1", ""}, "k") }},
		{"DeleteNodes", "idempotency key is empty", func() error { return p.DeleteNodes(ctx, "g", []string{"n1"}, "") }},
		{"DeleteNodeGroup", "group ID is empty", func() error { return p.DeleteNodeGroup(ctx, "", "k") }},
		{"NodeGroups", "pool", func() error { _, err := p.NodeGroups(ctx, types.PoolKey{}); return err }},
	} {
		err := c.call()
		require.Error(t, err, c.op)
		assert.True(t, errclass.IsPermanent(err), "%s: %v", c.op, err)
		assert.Contains(t, err.Error(), "rec "+c.op+": Permanent")
		assert.Contains(t, err.Error(), c.want)
	}
	assert.Zero(t, rec.calls, "a refused call must not reach the provider")

	require.NoError(t, p.SetTargetSize(ctx, "g", 0, "k"))
	require.NoError(t, p.SetTargetSize(ctx, "g", connectors.MaxTargetSize, "k"))
	_, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "s", TargetSize: 1}, "k")
	require.NoError(t, err, "Name is a hint: empty lets the provider choose")
	_, err = p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Name: "visor-api-xlarge_3_0", Size: "s", TargetSize: 1}, "k")
	require.NoError(t, err, "a name's form is the provider's to judge (a Lightsail bundle has underscores)")
	require.NoError(t, p.DeleteNodes(ctx, "g", []string{"n1"}, "k"))
	require.NoError(t, p.DeleteNodeGroup(ctx, "g", "k"))
	_, err = p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Equal(t, 7, rec.calls)
}

func TestCheckedKeepsALeakFinderOneAndWrapsOnce(t *testing.T) {
	ctx := context.Background()
	_, ok := connectors.Checked(&recorder{}).(connectors.LeakFinder)
	assert.False(t, ok, "a provider that finds no leaks must not seem to")

	rec := &leakyRecorder{}
	p := connectors.Checked(rec)
	lf, ok := p.(connectors.LeakFinder)
	require.True(t, ok)
	assert.Same(t, p, connectors.Checked(p), "wrapping twice checks twice for nothing")

	err := lf.DeleteInstances(ctx, pool, []string{"i-1"}, "")
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), "rec DeleteInstances")
	err = lf.DeleteInstances(ctx, pool, []string{""}, "k")
	assert.Contains(t, err.Error(), "instance ID [0] is empty")
	assert.Zero(t, rec.calls)
	require.NoError(t, lf.DeleteInstances(ctx, pool, []string{"i-1"}, "k"))
	_, err = lf.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	assert.Equal(t, 2, rec.calls)
}

// A deletion naming nothing is success without a call, for every
// provider the same: no connector repeats the shortcut.
func TestCheckedDeletesNothingWithoutCallingTheProvider(t *testing.T) {
	ctx := context.Background()
	rec := &leakyRecorder{}
	p := connectors.Checked(rec)
	require.NoError(t, p.DeleteNodes(ctx, "g", nil, "k"))
	require.NoError(t, p.(connectors.LeakFinder).DeleteInstances(ctx, pool, []string{}, "k"))
	assert.Zero(t, rec.calls)
	err := p.DeleteNodes(ctx, "", nil, "k")
	assert.True(t, errclass.IsPermanent(err), "the other arguments are still checked: %v", err)
}
