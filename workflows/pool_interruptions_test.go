package workflows

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// noticeQueue stands in for the provider's notice queue: notices stay
// listed until acknowledged; failAcks acknowledgements fail first.
type noticeQueue struct {
	w        *world
	notices  []connectors.Interruption
	reads    int
	acked    []string
	failAcks int
	// log is the order of what the pool did, for "acknowledged only after
	// the decision was recorded".
	log []string
}

func withNotices(t *testing.T, w *world) *noticeQueue {
	q := &noticeQueue{w: w}
	env := w.env
	env.OnActivity(a.ReadInterruptions, mock.Anything, mock.Anything).Return(func(context.Context, types.PoolKey) (activities.NoticesResult, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		q.reads++
		return activities.NoticesResult{Notices: slices.Clone(q.notices)}, nil
	})
	env.OnActivity(a.AcknowledgeInterruptions, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.AckInput) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if q.failAcks > 0 {
			q.failAcks--
			return errors.New("queue unreachable")
		}
		q.log = append(q.log, "ack")
		q.acked = append(q.acked, in.IDs...)
		q.notices = slices.DeleteFunc(q.notices, func(n connectors.Interruption) bool { return slices.Contains(in.IDs, n.ID) })
		return nil
	})
	return q
}

func (q *noticeQueue) send(n connectors.Interruption) {
	q.w.mu.Lock()
	defer q.w.mu.Unlock()
	q.notices = append(q.notices, n)
}

func TestSpotInterruptionBuysTheReplacementDrainsAndDeletesThenAcknowledges(t *testing.T) {
	p := types.DefaultPolicy()
	p.CapacityTypes = []types.CapacityType{types.CapacitySpot, types.CapacityOnDemand} // its nodes are spot
	env, w := newTestPool(t, p, busyNodes())
	w.capacity = types.CapacitySpot
	q := withNotices(t, w)
	q.failAcks = 1 // the first acknowledgement is lost: the notice is read again
	var noticeAt time.Time
	env.RegisterDelayedCallback(func() {
		noticeAt = env.Now()
		q.send(connectors.Interruption{InstanceID: "i-n1", Kind: connectors.InterruptionSpot, NoticeAt: noticeAt, Deadline: noticeAt.Add(2 * time.Minute), ID: "msg-1"})
		q.send(connectors.Interruption{InstanceID: "i-n2", Kind: connectors.InterruptionRebalance, NoticeAt: noticeAt, ID: "msg-2"})
	}, time.Minute)
	var st contract.PoolStatus
	var drained, deleted []string
	env.RegisterDelayedCallback(func() {
		st = status(t, env)
		w.mu.Lock()
		drained, deleted = slices.Clone(w.drained), slices.Clone(w.deleted)
		w.mu.Unlock()
	}, 4*time.Minute)
	finish(env, 5*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())

	var recs []contract.DecisionRecord
	for _, d := range st.Decisions {
		if d.Action == actionInterruption {
			recs = append(recs, d)
		}
	}
	require.Len(t, recs, 1, "one notice read twice acts once: %+v", st.Decisions)
	rec := recs[0]
	require.Contains(t, rec.Reason, "msg-1")
	require.Contains(t, rec.Reason, "machine i-n1")
	require.Equal(t, []string{"n1"}, rec.Removed)
	require.Equal(t, 1, rec.Added)
	require.True(t, strings.HasPrefix(rec.Outcome, "replaced by 1 × sim-4c8g; drained; deleted"), rec.Outcome)
	require.False(t, rec.At.Before(noticeAt) || rec.At.After(noticeAt.Add(poolcore.NoticePoll+time.Second)), "acted within one poll of the notice: %s vs %s", rec.At, noticeAt)

	require.Len(t, w.provisions, 1, "the replacement, bought without waiting for pending pods")
	require.Equal(t, 3, w.provisions[0].Target, "group target raised by one")
	require.Contains(t, string(w.provisions[0].IdempotencyKey), "/replace-n1")
	require.Equal(t, []string{"n1"}, drained, "drained through the drain activity; the rebalance recommendation is not acted on")
	require.Equal(t, []string{"n1"}, deleted)
	require.ElementsMatch(t, []string{"msg-1", "msg-2"}, q.acked, "acknowledged once the lost acknowledgement was retried")
	require.Empty(t, q.notices)
	require.GreaterOrEqual(t, q.reads, 2)
}

func TestOnDemandPoolReadsNoNotices(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	q := withNotices(t, w)
	finish(env, 3*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Zero(t, q.reads, "a pool without spot machines never asks")
}

func TestInterruptedNodeThatWillNotDrainGoesAtTheDeadline(t *testing.T) {
	p := types.DefaultPolicy()
	p.CapacityTypes = []types.CapacityType{types.CapacitySpot, types.CapacityOnDemand} // its nodes are spot
	env, w := newTestPool(t, p, busyNodes())
	w.capacity = types.CapacitySpot
	q := withNotices(t, w)
	var drainedAt, deadline time.Time
	w.drainErr = func(in activities.DrainInput) error {
		if in.Node != "n1" {
			return nil // the deregistration's drains at the end
		}
		if drainedAt.IsZero() {
			drainedAt = env.Now()
		}
		require.LessOrEqual(t, in.Timeout.D(), 2*time.Minute, "the drain is bounded by the deadline")
		return errors.New("drain refused: pod web-0 is do-not-disrupt")
	}
	env.RegisterDelayedCallback(func() {
		now := env.Now()
		deadline = now.Add(2 * time.Minute)
		q.send(connectors.Interruption{NodeName: "n1", Kind: connectors.InterruptionSpot, NoticeAt: now, Deadline: deadline, ID: "msg-9"})
	}, time.Minute)
	finish(env, 6*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.False(t, drainedAt.IsZero())
	deletedAt := w.deletedAt["n1"]
	require.Equal(t, "n1", w.deleted[0])
	require.False(t, deletedAt.Before(deadline), "a node that would not drain stays until its deadline (%s), deleted %s", deadline, deletedAt)
	require.Less(t, deletedAt.Sub(deadline), 5*time.Second, "and goes at the deadline")
	require.Equal(t, []string{"msg-9"}, q.acked)
}
