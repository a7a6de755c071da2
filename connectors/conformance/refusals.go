package conformance

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// wantClass is the class each refusal must carry.
var wantClass = map[Failure]errclass.Class{
	Quota:    errclass.Permanent,
	Capacity: errclass.InsufficientCapacity,
	Auth:     errclass.Permanent,
}

// refused: a create the provider refuses for f is an error of f's class
// that launched nothing; an auth refusal names the credential reference.
func refused(t *testing.T, s *subject, f Failure) {
	if why := s.Refuse(t, f); why != "" {
		t.Skipf("the double does not model the %s refusal: %s", f, why)
	}
	_, err := s.create(2, connectors.IdempotencyKey("conformance/refused-"+string(f)+"#1"))
	if err == nil {
		t.Fatalf("CreateNodeGroup succeeded though the double refused it (%s)", f)
	}
	if got := errclass.Of(err); got != wantClass[f] {
		t.Fatalf("a %s refusal is %s, want %s: %v", f, got, wantClass[f], err)
	}
	if f == Auth && s.Credential != "" && !strings.Contains(err.Error(), string(s.Credential)) {
		t.Fatalf("an auth refusal must name the credential reference %s: %v", s.Credential, err)
	}
	if n := s.Machines(t); n != 0 {
		t.Fatalf("a refused create left %d machines", n)
	}
}
