package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
)

// The sim is its own double: Machines reads its cloud-side state.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		f, _ := newTestFleet(t, nil)
		pool := testPool("conformance")
		lossy := &loseOnce{Fleet: f}
		return conformance.Double{
			Provider: lossy,
			Spec:     connectors.NodeGroupSpec{Pool: pool, Size: "sim-2c4g"},
			Machines: func(*testing.T) int {
				f.mu.Lock()
				defer f.mu.Unlock()
				n := 0
				for _, g := range f.st.Groups {
					if g.Pool == pool {
						n += len(g.Machines)
					}
				}
				return n
			},
			LoseAnswer: func(t *testing.T) { lossy.armed = true },
			Refuse: func(t *testing.T, fail conformance.Failure) string {
				switch fail {
				case conformance.Quota:
					return "its one quota is a group's target cap (maxGroupTarget), far above the suite's groups"
				case conformance.Auth:
					return "it takes no credential"
				}
				require.NoError(t, f.SetFaults(FaultConfig{InsufficientCapacitySizes: []string{"sim-2c4g"}}))
				return ""
			},
		}
	})
}

// loseOnce applies the next create and loses its answer (the sim's
// CreateSucceedsButErrorsRate at 1 for one call).
type loseOnce struct {
	*Fleet
	armed bool
}

func (l *loseOnce) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	if !l.armed {
		return l.Fleet.CreateNodeGroup(ctx, spec, key)
	}
	l.armed = false
	if err := l.SetFaults(FaultConfig{CreateSucceedsButErrorsRate: 1}); err != nil {
		return connectors.NodeGroup{}, err
	}
	defer func() { _ = l.SetFaults(FaultConfig{}) }()
	return l.Fleet.CreateNodeGroup(ctx, spec, key)
}
