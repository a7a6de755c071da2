package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// interruptions read the provider's interruption notices and act on each
// once: drain the machine before its deadline, buy its room again.
type interruptions struct{ *pool }

// A spot machine's notice gives two minutes. The pool reads notices on a
// timer of its own, every noticePoll (at most the sample interval), and
// only while the provider's view shows it spot machines: the safety resync
// comes every five minutes, too late for a two-minute warning, and the
// watcher's observe signals carry the cluster's nodes, not the provider's
// notice queue. An on-demand pool never reads, so its history has no
// interruption commands to replay.

// actionInterruption records a spot interruption the pool acted on.
const actionInterruption = "interruption"

// MetricInterruptions counts interruption notices taken, by kind
// (spot-interruption, rebalance-recommendation) and outcome (replaced,
// removed, gone, failed, noted).
const MetricInterruptions = "visor_pool_interruptions"

// noticeReader is the pool run's notice-reading clock and mode.
type noticeReader struct {
	// version is the run's changeInterruptions version, read the first
	// time the pool has spot machines (nil: not yet).
	version *workflow.Version
	// nextAt: no read before it; unsupported: the provider tells of no
	// notices, so this run asks no more.
	nextAt      time.Time
	unsupported bool
}

// noticeWake is when the pool next reads notices; false when it does not.
func (p interruptions) noticeWake() (time.Time, bool) {
	r := p.notices
	if p.state.Paused || r.unsupported || !p.state.HasSpot() || (r.version != nil && *r.version == workflow.DefaultVersion) {
		return time.Time{}, false
	}
	return r.nextAt, true
}

// takeInterruptions reads the pool's notices when due and acts on each
// one not acted on before, then acknowledges them all: a notice read
// twice (a crash before the acknowledgement, a queue that delivers twice)
// acts once.
func (p interruptions) takeInterruptions(ctx workflow.Context) {
	now := workflow.Now(ctx)
	at, ok := p.noticeWake()
	if !ok || now.Before(at) {
		return
	}
	if p.notices.version == nil {
		v := workflow.GetVersion(ctx, changeInterruptions, workflow.DefaultVersion, 1)
		p.notices.version = &v
		if v == workflow.DefaultVersion {
			return
		}
	}
	p.notices.nextAt = now.Add(p.state.NoticePollEvery())
	var res activities.NoticesResult
	err := workflow.ExecuteActivity(p.activityCtx(ctx, quickActivity, "read interruption notices"), a.ReadInterruptions, p.spec.Key).Get(ctx, &res)
	if err != nil {
		p.reject(ctx, "interruption read", err)
		return
	}
	if res.Unsupported {
		p.notices.unsupported = true
		return
	}
	for _, why := range res.Dropped {
		p.reject(ctx, "interruption notice", errors.New(why))
	}
	var ack []string
	fresh := false
	for _, n := range res.Notices {
		if _, done := p.state.Notices[n.ID]; !done {
			if !fresh && n.Kind == connectors.InterruptionSpot {
				// Replace and delete from what the provider says now.
				p.readProvider(ctx)
				fresh = true
			}
			p.actOnNotice(ctx, n)
		}
		ack = append(ack, n.ID)
	}
	if len(ack) > 0 {
		in := activities.AckInput{Key: p.spec.Key, IDs: ack}
		if err := workflow.ExecuteActivity(p.activityCtx(ctx, quickActivity, fmt.Sprintf("acknowledge %s", law.Plural(len(ack), "interruption notice"))), a.AcknowledgeInterruptions, in).Get(ctx, nil); err != nil {
			// The notices come back at the next read and are acknowledged then.
			p.reject(ctx, "interruption acknowledge", err)
		}
	}
	p.forgetNotices(workflow.Now(ctx))
}

// actOnNotice handles one notice not seen before: a spot interruption
// buys the replacement at once (no pending threshold: the pods are about
// to lose their node), then cordons and drains the node through the
// scale-down drain (PodDisruptionBudgets and do-not-disrupt count as
// ever) until the deadline, and deletes it by the deadline whatever the
// drain achieved. A rebalance recommendation is counted, not acted on
// (Karpenter's default too).
func (p interruptions) actOnNotice(ctx workflow.Context, n connectors.Interruption) {
	now := workflow.Now(ctx)
	p.state.Notices[n.ID] = maxTime(n.Deadline, now).Add(poolcore.NoticeMemory)
	if n.Kind != connectors.InterruptionSpot {
		p.countInterruption(ctx, n.Kind, "noted")
		return
	}
	seq := p.state.NextSeq()
	m, inGroup := p.state.InterruptedMachine(n)
	rec := contract.DecisionRecord{Seq: seq, At: now, Action: actionInterruption,
		Reason: fmt.Sprintf("spot interruption notice %s (sent %s): %s goes at %s", n.ID, n.NoticeAt.UTC().Format(time.RFC3339), poolcore.MachineName(n), n.Deadline.UTC().Format(time.RFC3339))}
	if !inGroup {
		rec.Outcome = "machine already gone: nothing to do"
		p.state.Record(rec)
		p.countInterruption(ctx, n.Kind, "gone")
		return
	}
	var steps []string
	replaced := false
	if g := p.state.LawGate(); !g.AllowScaleUp {
		steps = append(steps, "no replacement: "+g.Reason)
	} else if err := (repairer{p.pool}).replaceWith(ctx, seq, m); err != nil {
		steps = append(steps, "replacement failed: "+err.Error())
	} else {
		replaced = true
		rec.Added, rec.Size = 1, m.Size
		steps = append(steps, "replaced by 1 × "+m.Size)
	}
	if p.state.IsNode(m.Name) {
		steps = append(steps, p.drainUntil(ctx, m.Name, n.Deadline))
	}
	outcome := "removed"
	if err := (repairer{p.pool}).deleteMachine(ctx, seq, m); err != nil {
		steps = append(steps, "delete failed: "+err.Error())
		outcome = "failed"
	} else {
		rec.Removed = []string{m.Name}
		delete(p.state.IdleSince, m.Name)
		delete(p.state.UnderusedSince, m.Name)
		p.state.ForgetNode(m.Name)
		steps = append(steps, "deleted")
		if replaced {
			outcome = "replaced"
		}
	}
	rec.Outcome = strings.Join(steps, "; ")
	p.state.Record(rec)
	p.countInterruption(ctx, n.Kind, outcome)
}

// drainUntil drains the node through the scale-down drain, for no longer
// than the notice leaves; a drain that fails (a do-not-disrupt pod, a
// budget that allows nothing) waits out the deadline, since the machine
// goes then anyway. It says what happened.
func (p interruptions) drainUntil(ctx workflow.Context, node string, deadline time.Time) string {
	left := deadline.Sub(workflow.Now(ctx))
	if left < time.Second {
		return "not drained: the deadline has passed"
	}
	drain := activities.DrainInput{Key: p.spec.Key, Node: node, Timeout: types.Duration(left)}
	err := p.awaitCall(ctx, workflow.ExecuteActivity(p.drainCtx(ctx, "drain interrupted "+node), a.DrainNode, drain), nil)
	if err == nil {
		return "drained"
	}
	if wait := deadline.Sub(workflow.Now(ctx)); wait > 0 {
		_ = p.awaitCall(ctx, workflow.NewTimer(ctx, wait), nil)
	}
	return "not drained by the deadline (" + err.Error() + ")"
}

func (p interruptions) forgetNotices(now time.Time) { p.state.ForgetNoticesAt(now) }

func (p interruptions) countInterruption(ctx workflow.Context, kind, outcome string) {
	publisher{p.pool}.metricsHandler(ctx).WithTags(map[string]string{"kind": kind, "outcome": outcome}).Counter(MetricInterruptions).Inc(1)
}
