package conformance

import (
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// deletionByNameAndID: DeleteNodes takes a node's name or, for a machine
// that never registered, its ID; it lowers the target by as many so the
// provider replaces none, and a repeat is success.
func deletionByNameAndID(t *testing.T, s *subject) {
	g, err := s.create(3, "conformance/create#1")
	if err != nil {
		t.Fatalf("CreateNodeGroup: %v", err)
	}
	g = s.listedWith(t, g.ID, 3)
	byName, byID, kept := g.Instances[0], g.Instances[1], g.Instances[2]
	if byName.Name == "" || byID.ID == "" {
		t.Fatalf("listed instances need a name and an ID: %+v", g.Instances)
	}
	const key = connectors.IdempotencyKey("conformance/delete#2")
	for attempt := range 2 {
		if err := s.deleteNodes(g.ID, []string{byName.Name}, key); err != nil {
			t.Fatalf("DeleteNodes by name %q (attempt %d): %v", byName.Name, attempt, err)
		}
	}
	if err := s.deleteNodes(g.ID, []string{byID.ID}, "conformance/delete#3"); err != nil {
		t.Fatalf("DeleteNodes by ID %q: %v", byID.ID, err)
	}
	s.machinesSettleAt(t, 1, "two of three deleted, one by name and one by ID")
	after := s.listedWith(t, g.ID, 1)
	if after.TargetSize != 1 {
		t.Fatalf("group %s: target %d after deleting two of three; the provider would replace them", g.ID, after.TargetSize)
	}
	if left := live(after)[0]; left.ID != kept.ID {
		t.Fatalf("the instance left is %+v, want the one not named, %+v", left, kept)
	}
}

// groupDeletion: DeleteNodeGroup takes the group and its machines; a group
// already gone is success.
func groupDeletion(t *testing.T, s *subject) {
	g, err := s.create(2, "conformance/create#1")
	if err != nil {
		t.Fatalf("CreateNodeGroup: %v", err)
	}
	s.machinesSettleAt(t, 2, "a group of two")
	const key = connectors.IdempotencyKey("conformance/delete-group#2")
	if err := s.deleteGroup(g.ID, key); err != nil {
		t.Fatalf("DeleteNodeGroup: %v", err)
	}
	s.machinesSettleAt(t, 0, "the group deleted")
	if _, ok := s.group(t, g.ID); ok {
		t.Fatalf("group %s is still listed after DeleteNodeGroup", g.ID)
	}
	if err := s.deleteGroup(g.ID, key); err != nil {
		t.Fatalf("DeleteNodeGroup of a group already gone must be success: %v", err)
	}
}

// leakFinderSparesGroupMembers: a connector that finds leaks lists no
// group member as one and refuses, changing nothing, to delete a member
// as a leak.
func leakFinderSparesGroupMembers(t *testing.T, s *subject) {
	lf, ok := s.p.(connectors.LeakFinder)
	if !ok {
		t.Skipf("%s finds no leaks (it is no connectors.LeakFinder)", s.p.Name())
	}
	g, err := s.create(1, "conformance/create#1")
	if err != nil {
		t.Fatalf("CreateNodeGroup: %v", err)
	}
	member := s.listedWith(t, g.ID, 1).Instances[0]
	leaks, err := lf.LeakedInstances(s.ctx, s.Spec.Pool)
	s.record(leaks, err)
	if err != nil {
		t.Fatalf("LeakedInstances: %v", err)
	}
	for _, l := range leaks {
		if l.ID == member.ID {
			t.Fatalf("group member %s is listed as a leak", member.ID)
		}
	}
	err = lf.DeleteInstances(s.ctx, s.Spec.Pool, []string{member.ID}, "conformance/gc#2")
	s.record(nil, err)
	if !errclass.IsPermanent(err) {
		t.Fatalf("DeleteInstances of group member %s as a leak: %v, want a Permanent refusal", member.ID, err)
	}
	s.machinesSettleAt(t, 1, "a refused leak deletion")
}
