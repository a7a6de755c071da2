package law

import (
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Batching pending pods the way Karpenter does (Rules.Batch): a batch of
// new pending pods closes once none has arrived for BatchIdle, or
// BatchMax after its first one, and every pod in it is then sized in one
// plan, whatever the pending threshold: a burst is bought for as one
// packing instead of pod by pod, and a lone pod waits a second, not the
// threshold. The threshold stays an upper bound on the wait.
const (
	BatchIdle = time.Second
	BatchMax  = 10 * time.Second
)

// waitsToBuy says whether a pending entry may buy a node at all: not
// reported as fitting no size, not left without help by a node that came,
// not waiting on nodes bought for it.
func waitsToBuy(in DecisionInput, pod types.PendingPod) bool {
	if _, bad := in.Unplaceable[pod.Key()]; bad {
		return false
	}
	if _, hopeless := in.NoHelp[pod.Key()]; hopeless || (in.Awaiting[pod.Key()] && pod.Count == 0) {
		return false
	}
	return true
}

// closeOfBatch is when the batch of pending entries not yet past the
// threshold closes: BatchIdle after the newest, at most BatchMax after the
// oldest. Zero when there is none.
func closeOfBatch(in DecisionInput) time.Time {
	var first, last time.Time
	threshold := in.Policy.PendingThreshold.D()
	for _, pod := range in.Observation.PendingEntries() {
		since := pod.UnschedulableSince
		if !waitsToBuy(in, pod) || !in.Now.Before(since.Add(threshold)) {
			continue
		}
		if first.IsZero() || since.Before(first) {
			first = since
		}
		if since.After(last) {
			last = since
		}
	}
	if first.IsZero() {
		return time.Time{}
	}
	return earliest(last.Add(BatchIdle), first.Add(BatchMax))
}

// earliest is the earlier of two times, a zero one counting as none.
func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}
