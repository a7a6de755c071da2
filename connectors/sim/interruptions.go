package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

var _ connectors.InterruptionSource = (*Fleet)(nil)

// DefaultInterruptionNotice is how long before it takes a spot machine
// back the sim warns, as EC2 does.
const DefaultInterruptionNotice = 2 * time.Minute

// How long the sim keeps notices: acknowledged ones a while (a repeat
// Acknowledge finds them), at most maxNotices in all.
const (
	noticeRetention = time.Hour
	maxNotices      = 1000
)

// simNotice is one interruption notice the sim's cloud sent.
type simNotice struct {
	ID         string        `json:"id"`
	Pool       types.PoolKey `json:"pool"`
	GroupID    string        `json:"groupID"`
	InstanceID string        `json:"instanceID"`
	Node       string        `json:"node"`
	NoticeAt   time.Time     `json:"noticeAt"`
	Deadline   time.Time     `json:"deadline"`
	Acked      time.Time     `json:"acked,omitzero"`
}

// spotRand draws interruption times from its own stream, so turning
// interruptions on leaves every other fault's sequence as it was.
func spotRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x5b07)) }

// drawInterruption sets when a new spot machine will be told it goes:
// exponential with the configured rate per machine-hour, so a machine's
// chance is the same whatever its age. Called with f.mu held.
func (f *Fleet) drawInterruption(g *nodeGroup, m *machine, now time.Time) {
	rate := f.faults.SpotInterruptionRate
	if g.CapacityType != types.CapacitySpot || rate <= 0 {
		return
	}
	m.InterruptAt = now.Add(time.Duration(f.spotRng.ExpFloat64() / rate * float64(time.Hour)))
}

// noticeLength is the configured warning, or EC2's two minutes.
func (f *Fleet) noticeLength() time.Duration {
	if f.faults.InterruptionNotice > 0 {
		return f.faults.InterruptionNotice
	}
	return DefaultInterruptionNotice
}

// interruptMachines sends the notices that are due and takes back, at its
// deadline, every machine that was warned; like an Auto Scaling group the
// group keeps its target, so a machine the pool did not remove itself is
// replaced at the next Step. Called with f.mu held.
func (f *Fleet) interruptMachines(ctx context.Context, now time.Time) error {
	var errs []error
	for _, g := range f.sortedGroups() {
		var gone []string
		for _, m := range g.Machines {
			switch {
			case m.NoticeID == "" && !m.InterruptAt.IsZero() && !now.Before(m.InterruptAt):
				f.sendNotice(g, m, now)
			case m.NoticeID != "" && !now.Before(m.Deadline):
				gone = append(gone, m.ID)
			}
		}
		for _, id := range gone {
			errs = append(errs, f.removeMachine(ctx, g, g.machineIndex(id)))
		}
	}
	f.pruneNotices(now)
	return errors.Join(errs...)
}

// sendNotice warns that m goes one notice length from now. Called with f.mu held.
func (f *Fleet) sendNotice(g *nodeGroup, m *machine, now time.Time) simNotice {
	n := simNotice{
		ID: fmt.Sprintf("sim-notice-%06d", f.nextID()), Pool: g.Pool, GroupID: g.ID,
		InstanceID: m.ID, Node: m.Node, NoticeAt: now, Deadline: now.Add(f.noticeLength()),
	}
	m.NoticeID, m.Deadline = n.ID, n.Deadline
	f.st.Notices = append(f.st.Notices, n)
	f.touch()
	return n
}

func (f *Fleet) pruneNotices(now time.Time) {
	before := len(f.st.Notices)
	f.st.Notices = slices.DeleteFunc(f.st.Notices, func(n simNotice) bool {
		return !n.Acked.IsZero() && n.Acked.Before(now.Add(-noticeRetention))
	})
	if over := len(f.st.Notices) - maxNotices; over > 0 {
		f.st.Notices = append([]simNotice(nil), f.st.Notices[over:]...)
	}
	if len(f.st.Notices) != before {
		f.touch()
	}
}

// Interrupt warns now that the spot machine (instance ID or node name)
// will be taken back one notice length from now, whatever the rate says,
// so a test can stage an interruption. A machine already warned keeps its
// notice.
func (f *Fleet) Interrupt(machineName string) (connectors.Interruption, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.groupOfNode(machineName)
	if g == nil {
		return connectors.Interruption{}, fmt.Errorf("sim: no group has machine %q", machineName)
	}
	if g.CapacityType != types.CapacitySpot {
		return connectors.Interruption{}, fmt.Errorf("sim: machine %q is in group %s, bought %s: only spot machines are interrupted", machineName, g.ID, g.CapacityType.Or())
	}
	m := g.Machines[g.machineIndex(machineName)]
	for _, n := range f.st.Notices {
		if n.ID == m.NoticeID {
			return n.interruption(), nil
		}
	}
	return f.sendNotice(g, m, f.cfg.Clock()).interruption(), nil
}

// MarkSpot turns a group into spot capacity after the fact, as if it had
// been bought so: its machines from now on may be interrupted (each gets
// an interruption time drawn now). It stands in for a planner that buys
// spot, for tests and demos; nodes already registered keep their label.
func (f *Fleet) MarkSpot(groupID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.st.Groups[groupID]
	if g == nil {
		return fmt.Errorf("sim: no group %q", groupID)
	}
	g.CapacityType = types.CapacitySpot
	now := f.cfg.Clock()
	for _, m := range g.Machines {
		if m.InterruptAt.IsZero() {
			f.drawInterruption(g, m, now)
		}
	}
	f.touch()
	return nil
}

// capacityOf is how a new group is bought: as its spec says, or, when the
// spec leaves it open, as its node labels name it
// (karpenter.sh/capacity-type: spot, a pool's nodeLabels): so a pool can
// run on the sim's spot before a planner chooses offerings.
func capacityOf(spec connectors.NodeGroupSpec) types.CapacityType {
	if spec.CapacityType == "" && spec.Labels[types.CapacityTypeLabel] == string(types.CapacitySpot) {
		return types.CapacitySpot
	}
	return spec.CapacityType.Or()
}

func (n simNotice) interruption() connectors.Interruption {
	return connectors.Interruption{InstanceID: n.InstanceID, NodeName: n.Node, Kind: connectors.InterruptionSpot,
		NoticeAt: n.NoticeAt, Deadline: n.Deadline, ID: n.ID}
}

// Interruptions lists the pool's notices not yet acknowledged, oldest
// first, including those whose machine is already gone.
func (f *Fleet) Interruptions(ctx context.Context, pool types.PoolKey) ([]connectors.Interruption, error) {
	defer f.enter(ctx)()
	if err := f.poolRead(ctx, connectors.OpInterruptions, pool); err != nil {
		return nil, err
	}
	out := []connectors.Interruption{}
	for _, n := range f.st.Notices {
		if n.Pool == pool && n.Acked.IsZero() {
			out = append(out, n.interruption())
		}
	}
	return out, nil
}

// Acknowledge drops the pool's notices by ID; an unknown or repeated ID is
// success, as deleting an SQS message twice is.
func (f *Fleet) Acknowledge(ctx context.Context, pool types.PoolKey, ids []string) error {
	defer f.enter(ctx)()
	if err := f.poolRead(ctx, connectors.OpAcknowledge, pool); err != nil {
		return err
	}
	now := f.cfg.Clock()
	for i := range f.st.Notices {
		if n := &f.st.Notices[i]; n.Pool == pool && n.Acked.IsZero() && slices.Contains(ids, n.ID) {
			n.Acked = now
			f.touch()
		}
	}
	return nil
}

// Notices is every notice the sim sent that it still keeps, oldest first,
// for tests and chaos checks: the truth, without faults.
func (f *Fleet) Notices() []connectors.Interruption {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]connectors.Interruption, 0, len(f.st.Notices))
	for _, n := range f.st.Notices {
		out = append(out, n.interruption())
	}
	return out
}
