package conformance

import (
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
)

// The provider's calls, each recorded for the secret check.

func (s *subject) create(target int, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	spec := s.Spec
	spec.TargetSize = target
	g, err := s.p.CreateNodeGroup(s.ctx, spec, key)
	s.record(g, err)
	return g, err
}

func (s *subject) groups(t *testing.T) []connectors.NodeGroup {
	t.Helper()
	gs, err := s.p.NodeGroups(s.ctx, s.Spec.Pool)
	s.record(gs, err)
	if err != nil {
		t.Fatalf("NodeGroups(%s): %v", s.Spec.Pool, err)
	}
	return gs
}

// group is the listed group of that ID; ok is false when none is listed.
func (s *subject) group(t *testing.T, id string) (connectors.NodeGroup, bool) {
	t.Helper()
	for _, g := range s.groups(t) {
		if g.ID == id {
			return g, true
		}
	}
	return connectors.NodeGroup{}, false
}

func (s *subject) setTarget(groupID string, target int, key connectors.IdempotencyKey) error {
	err := s.p.SetTargetSize(s.ctx, groupID, target, key)
	s.record(nil, err)
	return err
}

func (s *subject) deleteNodes(groupID string, names []string, key connectors.IdempotencyKey) error {
	err := s.p.DeleteNodes(s.ctx, groupID, names, key)
	s.record(nil, err)
	return err
}

func (s *subject) deleteGroup(groupID string, key connectors.IdempotencyKey) error {
	err := s.p.DeleteNodeGroup(s.ctx, groupID, key)
	s.record(nil, err)
	return err
}

// machinesSettleAt waits until the double holds want live machines for the
// pool, failing with what it last held.
func (s *subject) machinesSettleAt(t *testing.T, want int, why string) {
	t.Helper()
	deadline := time.Now().Add(settle)
	for {
		got := s.Machines(t)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the double holds %d live machines for %s, want %d", why, got, s.Spec.Pool, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// listedWith waits until the group is listed with n instances that are
// not being deleted, and returns it.
func (s *subject) listedWith(t *testing.T, id string, n int) connectors.NodeGroup {
	t.Helper()
	deadline := time.Now().Add(settle)
	for {
		g, ok := s.group(t, id)
		if ok && len(live(g)) == n {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s: listed %v with %d live instances, want %d (%+v)", id, ok, len(live(g)), n, g.Instances)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func live(g connectors.NodeGroup) []connectors.Instance {
	var out []connectors.Instance
	for _, in := range g.Instances {
		if in.State != connectors.InstanceDeleting {
			out = append(out, in)
		}
	}
	return out
}
