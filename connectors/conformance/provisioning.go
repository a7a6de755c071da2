package conformance

import (
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// idempotentProvisioning: a create and a scale-up each sent twice with one
// key leave the machines asked for once.
func idempotentProvisioning(t *testing.T, s *subject) {
	const key = connectors.IdempotencyKey("conformance/create#1")
	first, err := s.create(2, key)
	if err != nil {
		t.Fatalf("CreateNodeGroup: %v", err)
	}
	again, err := s.create(2, key)
	if err != nil {
		t.Fatalf("CreateNodeGroup repeated with the same key: %v", err)
	}
	if again.ID != first.ID {
		t.Fatalf("the repeat answered group %q, the first %q: one key, one group", again.ID, first.ID)
	}
	s.machinesSettleAt(t, 2, "a create sent twice with one key")
	if n := len(s.groups(t)); n != 1 {
		t.Fatalf("the pool lists %d groups after one create sent twice, want 1", n)
	}

	const scale = connectors.IdempotencyKey("conformance/scale#2")
	for range 2 {
		if err := s.setTarget(first.ID, 3, scale); err != nil {
			t.Fatalf("SetTargetSize 3: %v", err)
		}
	}
	s.machinesSettleAt(t, 3, "a scale-up sent twice with one key")
	if g := s.listedWith(t, first.ID, 3); g.TargetSize != 3 {
		t.Fatalf("group %s: target %d after SetTargetSize 3", g.ID, g.TargetSize)
	}
}

// lostAnswerFoundByList: the provider applied a create whose answer was
// lost; the connector's retry with the same key finds the group by listing
// instead of launching a second set.
func lostAnswerFoundByList(t *testing.T, s *subject) {
	const key = connectors.IdempotencyKey("conformance/create-lost#1")
	s.LoseAnswer(t)
	var g connectors.NodeGroup
	var err error
	for attempt := range 3 {
		if g, err = s.create(2, key); err == nil {
			break
		}
		t.Logf("attempt %d after the lost answer: %v", attempt, err)
		// The activity retries what is not marked final.
		if c := errclass.Of(err); c != errclass.Retryable && c != errclass.RateLimited {
			t.Fatalf("attempt %d after a lost answer: %s error, want success or Retryable: %v", attempt, c, err)
		}
	}
	if err != nil {
		t.Fatalf("three attempts with one key after a lost answer: %v", err)
	}
	s.machinesSettleAt(t, 2, "a create whose answer was lost, then retried with its key")
	groups := s.groups(t)
	if len(groups) != 1 || groups[0].ID != g.ID {
		t.Fatalf("after a lost answer and its retry the pool lists %+v, want only group %s", groups, g.ID)
	}
}
