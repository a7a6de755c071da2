package activities

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// maxNoticesRead bounds the notices one read carries into history; the
// rest stay at the provider for the next read.
const maxNoticesRead = 50

// maxNoticeText bounds a notice's ID and names: provider input like any other.
const maxNoticeText = 256

// NoticesResult is the pool's unacknowledged interruption notices.
// Unsupported: the provider tells of none (the pool stops asking until
// its next run).
type NoticesResult struct {
	Notices     []connectors.Interruption `json:"notices,omitempty"`
	Unsupported bool                      `json:"unsupported,omitempty"`
	// Dropped are notices refused as malformed, with why.
	Dropped []string `json:"dropped,omitempty"`
}

// ReadInterruptions lists the pool's interruption notices not yet
// acknowledged, oldest first, checked and bounded.
func (a *Activities) ReadInterruptions(ctx context.Context, key types.PoolKey) (NoticesResult, error) {
	c, err := a.cluster(ctx, key.Cluster)
	if err != nil {
		return NoticesResult{}, err
	}
	src, ok := c.Provider.(connectors.InterruptionSource)
	if !ok {
		return NoticesResult{Unsupported: true}, nil
	}
	notices, err := src.Interruptions(ctx, key)
	if errors.Is(err, connectors.ErrNoInterruptions) {
		return NoticesResult{Unsupported: true}, nil
	}
	if err != nil {
		return NoticesResult{}, asTemporalError(err)
	}
	return checkNotices(notices), nil
}

// checkNotices keeps the well-formed notices, oldest first, at most
// maxNoticesRead of them.
func checkNotices(notices []connectors.Interruption) NoticesResult {
	var res NoticesResult
	for _, n := range notices {
		if why := noticeProblem(n); why != "" {
			res.Dropped = append(res.Dropped, why)
			continue
		}
		res.Notices = append(res.Notices, n)
	}
	sort.SliceStable(res.Notices, func(i, j int) bool { return res.Notices[i].NoticeAt.Before(res.Notices[j].NoticeAt) })
	if len(res.Notices) > maxNoticesRead {
		res.Notices = res.Notices[:maxNoticesRead]
	}
	if len(res.Dropped) > maxNoticesRead {
		res.Dropped = res.Dropped[:maxNoticesRead]
	}
	return res
}

func noticeProblem(n connectors.Interruption) string {
	switch {
	case n.ID == "" || len(n.ID) > maxNoticeText:
		return fmt.Sprintf("notice for %q%q: ID must be 1 to %d characters", n.InstanceID, n.NodeName, maxNoticeText)
	case n.InstanceID == "" && n.NodeName == "":
		return fmt.Sprintf("notice %s names no machine", n.ID)
	case len(n.InstanceID) > maxNoticeText || len(n.NodeName) > maxNoticeText:
		return fmt.Sprintf("notice %s: machine names longer than %d characters", n.ID, maxNoticeText)
	case n.Kind != connectors.InterruptionSpot && n.Kind != connectors.InterruptionRebalance:
		return fmt.Sprintf("notice %s: kind %q is neither %s nor %s", n.ID, n.Kind, connectors.InterruptionSpot, connectors.InterruptionRebalance)
	case n.NoticeAt.IsZero():
		return fmt.Sprintf("notice %s has no time", n.ID)
	case n.Kind == connectors.InterruptionSpot && (n.Deadline.Before(n.NoticeAt) || n.Deadline.Sub(n.NoticeAt) > time.Hour):
		return fmt.Sprintf("notice %s: deadline %s is not within an hour after the notice %s", n.ID, n.Deadline.Format(time.RFC3339), n.NoticeAt.Format(time.RFC3339))
	}
	return ""
}

// AckInput names the notices a pool acted on and recorded.
type AckInput struct {
	Key types.PoolKey `json:"key"`
	IDs []string      `json:"ids"`
}

// AcknowledgeInterruptions drops the notices at the provider (an SQS
// delete). The pool calls it only after recording what it did, so a lost
// worker makes the notice come back, never vanish unhandled; a repeat is
// harmless.
func (a *Activities) AcknowledgeInterruptions(ctx context.Context, in AckInput) error {
	c, err := a.cluster(ctx, in.Key.Cluster)
	if err != nil {
		return err
	}
	src, ok := c.Provider.(connectors.InterruptionSource)
	if !ok {
		return asTemporalError(errclass.New(errclass.Permanent, c.Provider.Name(), connectors.OpAcknowledge,
			fmt.Errorf("provider of cluster %s tells of no interruptions", c.ID)))
	}
	return asTemporalError(src.Acknowledge(ctx, in.Key, in.IDs))
}
