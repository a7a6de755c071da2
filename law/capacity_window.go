package law

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/hanzoai/visor-fleet/types"
)

// window is one compiled cron window: it is open on [s, s+dur) for every
// time s its schedule fires, and its early part (a capacity window's
// pre-scaling) on [s-lead, s).
type window struct {
	label string
	sched cron.Schedule
	dur   time.Duration
	lead  time.Duration
}

// compileWindow compiles a window; a policy that passed Validate always
// compiles, so an error here means an unvalidated policy.
func compileWindow(label, name, schedule, zone string, dur, lead time.Duration) (window, error) {
	s, err := types.CompileSchedule(schedule, zone)
	if err != nil {
		return window{}, fmt.Errorf("%s: %w", label, err)
	}
	if dur <= 0 {
		return window{}, fmt.Errorf("%s: duration must be above zero", label)
	}
	if name != "" {
		label = fmt.Sprintf("%s %q", label, name)
	}
	return window{label: label, sched: s, dur: dur, lead: lead}, nil
}

// firstEnding is the earliest firing s whose window [s-lead, s+dur) has
// not ended by t (s > t-dur), or zero when the schedule never fires again.
func (w window) firstEnding(t time.Time) time.Time { return w.sched.Next(t.Add(-w.dur)) }

// open reports whether t lies inside [s, s+dur) for some firing s.
func (w window) open(t time.Time) bool {
	s := w.firstEnding(t)
	return !s.IsZero() && !s.After(t)
}

// early reports whether t lies inside [s-lead, s+dur) for some firing s:
// the window is open or about to open within lead.
func (w window) early(t time.Time) bool {
	s := w.firstEnding(t)
	return !s.IsZero() && !s.After(t.Add(w.lead))
}

// openUntil is when the window open at t closes: the end of the last of
// the overlapping firings that cover t without a gap. Zero if not open.
func (w window) openUntil(t time.Time) time.Time {
	s := w.firstEnding(t)
	if s.IsZero() || s.After(t) {
		return time.Time{}
	}
	end := s.Add(w.dur)
	// Firings before the current end extend the window; bounded so a
	// minute-by-minute schedule with a week's duration stays cheap.
	for i := 0; i < maxChainedFirings; i++ {
		n := w.sched.Next(s)
		if n.IsZero() || n.After(end) {
			break
		}
		s, end = n, latest(end, n.Add(w.dur))
	}
	return end
}

// maxChainedFirings bounds openUntil's walk along overlapping firings.
const maxChainedFirings = 1024

// nextEdge is the first moment after t where open or early may flip: a
// firing's pre-scale start, its opening, or the end of the earliest
// firing still open. Zero if the schedule never fires again.
func (w window) nextEdge(t time.Time) time.Time {
	var best time.Time
	consider := func(c time.Time) {
		if !c.IsZero() && c.After(t) && (best.IsZero() || c.Before(best)) {
			best = c
		}
	}
	if w.lead > 0 {
		if s := w.sched.Next(t.Add(w.lead)); !s.IsZero() {
			consider(s.Add(-w.lead))
		}
	}
	consider(w.sched.Next(t))
	if s := w.firstEnding(t); !s.IsZero() {
		consider(s.Add(w.dur))
	}
	return best
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// maxEdgeSteps bounds how many window edges a search for the next change
// walks before it settles for a wake-up that just re-evaluates.
const maxEdgeSteps = 512

// nextChange walks window edges after now until state differs from its
// value at now; it returns the zero time when no window fires again.
func nextChange[S comparable](windows []window, now time.Time, state func(time.Time) S) time.Time {
	if len(windows) == 0 {
		return time.Time{}
	}
	at := state(now)
	t := now
	for i := 0; i < maxEdgeSteps; i++ {
		var next time.Time
		for _, w := range windows {
			if e := w.nextEdge(t); !e.IsZero() && (next.IsZero() || e.Before(next)) {
				next = e
			}
		}
		if next.IsZero() {
			return time.Time{}
		}
		if state(next) != at {
			return next
		}
		t = next
	}
	return t
}
