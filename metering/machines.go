package metering

import (
	"fmt"
	"slices"
	"time"
)

// Machines is what the meter bills a pool for: the machines the provider
// ran for it, each from its creation to its end as the provider reports
// them, built from the pool's reads of its node groups (Take). It lives in
// workflow state, so it is small and JSON-serialisable, and every method
// is deterministic.
//
// An hour is billed only once a read taken at or after its end has been
// seen (Covers): every machine alive then is listed, and every machine
// that ended before it is either listed as ended by the provider or was
// listed alive and is missing now. So a stale or missing observation, or
// a worker gone for a while, neither drops nor invents machine time: the
// next read after the gap tells what ran in it.
type Machines struct {
	// Live are the machines the newest read listed.
	Live []MachineSpan `json:"live,omitempty"`
	// Ended are machines that ended and may still run into an unbilled
	// hour (Prune drops those that ended before the cursor).
	Ended []MachineSpan `json:"ended,omitempty"`
	// Seen is when the newest read was taken: the provider's truth is
	// known up to it.
	Seen time.Time `json:"seen,omitzero"`
	// Horizon is the latest Prune point: hours before it are billed.
	Horizon time.Time `json:"horizon,omitzero"`
}

// MachineSpan is one machine's run: from From until To (zero while it
// runs), of Size.
type MachineSpan struct {
	ID   string    `json:"id"`
	Size string    `json:"size"`
	From time.Time `json:"from"`
	To   time.Time `json:"to,omitzero"`
	// Estimated: the provider did not report the end, so To is the first
	// read that no longer listed the machine.
	Estimated bool `json:"estimated,omitempty"`
}

// MachineRun is one machine as a read reports it: alive (Ended zero) or
// ended at Ended. Created may be zero when the provider does not say.
type MachineRun struct {
	ID      string
	Size    string
	Created time.Time
	Ended   time.Time
}

// MaxEndedSpans bounds the ended machines kept between two billed hours;
// past it the oldest are dropped (and the drop reported), so no provider
// answer can grow the state without bound.
const MaxEndedSpans = 2000

// Take folds one read of the provider, taken at at, into the record:
// live are the machines it lists, ended those it reports terminated
// (with their end). A machine that was live and is neither listed nor
// reported ended ended at this read. A machine seen for the first time
// runs from its creation (or from this read when the provider gives no
// creation time). A read older than the newest one taken is ignored, and
// so is one without a time. A machine with no ID or a bad size is left
// out and the error says so; the rest of the read is taken. It returns
// how many ended machines were dropped past MaxEndedSpans.
func (m *Machines) Take(at time.Time, live, ended []MachineRun) (dropped int, err error) {
	if at.IsZero() {
		return 0, fmt.Errorf("provider read has no time")
	}
	at = at.UTC()
	if at.Before(m.Seen) {
		return 0, nil
	}
	// A machine the meter cannot name is left out, and said so, rather
	// than the read: one bad entry must not hold every hour back.
	var bad error
	valid := func(runs []MachineRun) []MachineRun {
		var out []MachineRun
		for _, r := range runs {
			switch err := ValidateSize(r.Size); {
			case r.ID == "":
				bad = fmt.Errorf("provider read lists a machine with no ID: left out")
			case err != nil:
				bad = fmt.Errorf("machine %s: %w: left out", r.ID, err)
			default:
				out = append(out, r)
			}
		}
		return out
	}
	live, ended = valid(live), valid(ended)
	alive := make(map[string]bool, len(live))
	for _, r := range live {
		alive[r.ID] = true
	}
	endedAt := make(map[string]MachineRun, len(ended))
	for _, r := range ended {
		if !alive[r.ID] && !r.Ended.IsZero() {
			endedAt[r.ID] = r
		}
	}
	known := make(map[string]bool, len(m.Live)+len(m.Ended))
	var next []MachineSpan
	kept := m.Ended[:0]
	for _, s := range m.Ended {
		known[s.ID] = true
		switch r, reported := endedAt[s.ID]; {
		case alive[s.ID]:
			// Listed again (a provider that lost the termination, as a
			// restored snapshot would): it runs on from where it began.
			s.To, s.Estimated = time.Time{}, false
			next = append(next, s)
			continue
		case reported && s.Estimated:
			// An end first estimated, reported by the provider later:
			// take the provider's, within what is still unbilled.
			s.To, s.Estimated = clampTime(r.Ended.UTC(), maxTime(s.From, m.Horizon), s.To), false
		}
		kept = append(kept, s)
	}
	m.Ended = kept
	// Machines that were running: still listed, or ended.
	for _, s := range m.Live {
		known[s.ID] = true
		if alive[s.ID] {
			next = append(next, s)
			continue
		}
		if r, ok := endedAt[s.ID]; ok {
			s.To = clampTime(r.Ended.UTC(), s.From, at)
		} else {
			s.To, s.Estimated = at, true
		}
		m.Ended = append(m.Ended, s)
	}
	// Machines that came and went unseen: their time is still unbilled
	// unless it ended before the horizon.
	for _, r := range ended {
		if known[r.ID] || alive[r.ID] || r.Ended.IsZero() {
			continue
		}
		known[r.ID] = true
		to := r.Ended.UTC()
		if to.After(at) {
			to = at
		}
		if !to.After(m.Horizon) {
			continue
		}
		from := r.Created.UTC()
		if from.IsZero() || from.After(to) {
			from = to
		}
		m.Ended = append(m.Ended, MachineSpan{ID: r.ID, Size: r.Size, From: from, To: to})
	}
	// Machines seen for the first time.
	for _, r := range live {
		if known[r.ID] {
			continue
		}
		known[r.ID] = true
		from := r.Created.UTC()
		if from.IsZero() || from.After(at) {
			from = at
		}
		next = append(next, MachineSpan{ID: r.ID, Size: r.Size, From: from})
	}
	slices.SortFunc(next, func(a, b MachineSpan) int { return compareSpans(a, b) })
	m.Live = next
	m.Seen = at
	if over := len(m.Ended) - MaxEndedSpans; over > 0 {
		slices.SortStableFunc(m.Ended, func(a, b MachineSpan) int { return a.To.Compare(b.To) })
		m.Ended = slices.Delete(m.Ended, 0, over)
		dropped = over
	}
	return dropped, bad
}

// Covers reports whether the provider's truth is known through t: a read
// at or after it has been taken.
func (m *Machines) Covers(t time.Time) bool {
	return !m.Seen.IsZero() && !m.Seen.Before(t)
}

// NodeHours is the machine time per size in the UTC hour [hour, hour+1h)
// (hour is truncated), in node-hours; sizes with none are left out.
// Machines still running count up to the newest read, so an hour is
// complete only once Covers(its end).
func (m *Machines) NodeHours(hour time.Time) map[string]float64 {
	start := hour.UTC().Truncate(time.Hour)
	end := start.Add(time.Hour)
	sums := map[string]int64{}
	add := func(s MachineSpan, to time.Time) {
		from := s.From
		if from.Before(start) {
			from = start
		}
		if to.After(end) {
			to = end
		}
		if to.After(from) {
			sums[s.Size] += int64(to.Sub(from))
		}
	}
	for _, s := range m.Live {
		add(s, m.Seen)
	}
	for _, s := range m.Ended {
		add(s, s.To)
	}
	out := make(map[string]float64, len(sums))
	for size, ns := range sums {
		out[size] = float64(ns) / float64(time.Hour)
	}
	return out
}

// Prune drops the ended machines no hour at or after before can need.
// Pass the meter cursor.
func (m *Machines) Prune(before time.Time) {
	if before.IsZero() {
		return
	}
	before = before.UTC()
	m.Ended = slices.DeleteFunc(m.Ended, func(s MachineSpan) bool { return !s.To.After(before) })
	if before.After(m.Horizon) {
		m.Horizon = before
	}
}

func compareSpans(a, b MachineSpan) int {
	if c := a.From.Compare(b.From); c != 0 {
		return c
	}
	if a.ID < b.ID {
		return -1
	}
	if a.ID > b.ID {
		return 1
	}
	return 0
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func clampTime(t, lo, hi time.Time) time.Time {
	if t.Before(lo) {
		return lo
	}
	if t.After(hi) {
		return hi
	}
	return t
}
