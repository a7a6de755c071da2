package law

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Predictive pre-warm (Rules.Prewarm): each pool learns its own demand by
// time of day and of week from what it observed, and buys a provisioning
// delay ahead of the rise it expects. The model is pool state: bounded
// (ForecastSlotsPerWeek slots of ForecastSlot, three numbers each),
// updated only from observations, and pure, so the workflow can carry it
// and replay it.

const (
	// ForecastSlot is the model's resolution: the peak demand of each
	// slot of the day and of the week is what it remembers.
	ForecastSlot = 10 * time.Minute
	// ForecastSlotsPerDay and ForecastSlotsPerWeek bound the model.
	ForecastSlotsPerDay  = int(24 * time.Hour / ForecastSlot)
	ForecastSlotsPerWeek = 7 * ForecastSlotsPerDay
	// ForecastHistory is how much history the model needs before it buys
	// anything: a pool younger than a day never pre-warms.
	ForecastHistory = 24 * time.Hour
	// MaxPrewarmPods bounds the stand-in pods one pre-warm buys for.
	MaxPrewarmPods = 200
	// forecastBlend is how much a new day's (or week's) peak counts
	// against what the slot held.
	forecastBlend = 0.5
)

// Demand is one slot's peak: the requests of the pool's pods, bound or
// pending (CPU in millicores, memory in MiB, GPUs).
type Demand struct {
	MilliCPU int64 `json:"cpu,omitempty"`
	MemMiB   int64 `json:"memMiB,omitempty"`
	GPUs     int64 `json:"gpus,omitempty"`
}

func demandOf(r types.Resources) Demand {
	return Demand{MilliCPU: r.MilliCPU, MemMiB: r.Memory >> 20, GPUs: r.GPUs}
}

func (d Demand) max(o Demand) Demand {
	return Demand{MilliCPU: max(d.MilliCPU, o.MilliCPU), MemMiB: max(d.MemMiB, o.MemMiB), GPUs: max(d.GPUs, o.GPUs)}
}

func (d Demand) blend(o Demand) Demand {
	mix := func(a, b int64) int64 { return int64((1-forecastBlend)*float64(a) + forecastBlend*float64(b) + 0.5) }
	return Demand{MilliCPU: mix(d.MilliCPU, o.MilliCPU), MemMiB: mix(d.MemMiB, o.MemMiB), GPUs: mix(d.GPUs, o.GPUs)}
}

// DemandModel is a pool's seasonal demand: the peak of each slot of the
// day and of the week, each blended over the days (weeks) seen, and what
// the model forecast for the slot under way, to score itself.
type DemandModel struct {
	// Since is the first observation; Last the latest.
	Since time.Time `json:"since"`
	Last  time.Time `json:"last"`
	// Day and Week are the slots' blended peaks; Seen says which slots of
	// the week hold a value (a week's slot without one reads the day's).
	Day  []Demand `json:"day,omitempty"`
	Week []Demand `json:"week,omitempty"`
	Seen []bool   `json:"seen,omitempty"`
	// Current is the peak of the slot under way, which began at Start.
	Start   time.Time `json:"start"`
	Current Demand    `json:"current"`
	// Shape is the pool's typical pod (blended mean requests), what a
	// pre-warm's stand-in pods ask for.
	Shape types.Resources `json:"shape"`
	// Error and Actual sum, over the slots closed with a forecast, the
	// forecast's absolute CPU error and the actual CPU peak: Error/Actual
	// is the model's relative error.
	Error  float64 `json:"error,omitempty"`
	Actual float64 `json:"actual,omitempty"`
	// Prewarm is the last pre-warm and what became of it.
	Prewarm *PrewarmRecord `json:"prewarm,omitempty"`
	// Hits and Misses count pre-warms whose forecast came true (the peak
	// reached 80 % of it by the slot after) or did not.
	Hits   int `json:"hits,omitempty"`
	Misses int `json:"misses,omitempty"`
}

// PrewarmRecord is one pre-warm: when, for which slot's forecast, and
// once judged whether it came true.
type PrewarmRecord struct {
	At       time.Time `json:"at"`
	For      time.Time `json:"for"`
	Forecast Demand    `json:"forecast"`
	Pods     int       `json:"pods"`
	// Judged once the slot after For has begun; CameTrue then says
	// whether the peak reached 80 % of the forecast CPU.
	Judged   bool `json:"judged,omitempty"`
	CameTrue bool `json:"cameTrue,omitempty"`
	// Peak is the highest demand seen from At until judged.
	Peak Demand `json:"peak"`
}

func slotOf(t time.Time) (day, week int) {
	u := t.UTC()
	minutes := u.Hour()*60 + u.Minute()
	day = minutes / int(ForecastSlot/time.Minute)
	return day, int(u.Weekday())*ForecastSlotsPerDay + day
}

func slotStart(t time.Time) time.Time { return t.UTC().Truncate(ForecastSlot) }

// ObservedDemand is what an observation says the pool's pods ask for: the
// requests of its pods, bound and pending (Pods their count), and how many
// pods that is; what ObserveDemand takes.
func ObservedDemand(obs types.PoolObservation) (types.Resources, int) {
	var req types.Resources
	n := 0
	for _, nd := range obs.Nodes {
		req = req.Add(nd.Requested)
		n += int(nd.Requested.Pods)
	}
	for _, p := range obs.PendingPods {
		// A shape stands for up to thousands of pods: multiply, not loop.
		req = req.Add(p.Requests.Times(int64(p.Pods())))
		n += p.Pods()
	}
	req.Pods = int64(n)
	return req, n
}

// ObserveDemand folds one observation of the pool's demand (requests of
// its pods bound and pending, and how many pods) into the model and
// returns it; m may be nil (a new model). Observations out of order are
// ignored.
func ObserveDemand(m *DemandModel, at time.Time, requests types.Resources, pods int) *DemandModel {
	if m == nil {
		m = &DemandModel{Since: at, Start: slotStart(at)}
	}
	if at.Before(m.Last) {
		return m
	}
	if len(m.Day) != ForecastSlotsPerDay || len(m.Week) != ForecastSlotsPerWeek || len(m.Seen) != ForecastSlotsPerWeek {
		m.Day, m.Week, m.Seen = make([]Demand, ForecastSlotsPerDay), make([]Demand, ForecastSlotsPerWeek), make([]bool, ForecastSlotsPerWeek)
	}
	if start := slotStart(at); !start.Equal(m.Start) {
		m.closeSlot()
		m.Start, m.Current = start, Demand{}
	}
	d := demandOf(requests)
	m.Current = m.Current.max(d)
	if pods > 0 {
		mean := types.Resources{MilliCPU: requests.MilliCPU / int64(pods), Memory: requests.Memory / int64(pods), GPUs: (requests.GPUs + int64(pods) - 1) / int64(pods), Pods: 1}
		if m.Shape.Pods == 0 {
			m.Shape = mean
		} else {
			mix := func(a, b int64) int64 { return (a*15 + b) / 16 }
			m.Shape = types.Resources{MilliCPU: mix(m.Shape.MilliCPU, mean.MilliCPU), Memory: mix(m.Shape.Memory, mean.Memory), GPUs: max(m.Shape.GPUs, mean.GPUs), Pods: 1}
		}
	}
	if r := m.Prewarm; r != nil && !r.Judged {
		r.Peak = r.Peak.max(d)
		if !at.Before(r.For.Add(2 * ForecastSlot)) {
			r.Judged = true
			r.CameTrue = float64(r.Peak.MilliCPU) >= 0.8*float64(r.Forecast.MilliCPU)
			if r.CameTrue {
				m.Hits++
			} else {
				m.Misses++
			}
		}
	}
	m.Last = at
	return m
}

// closeSlot blends the slot that ended into the day and week profiles,
// after scoring what the model forecast for it.
func (m *DemandModel) closeSlot() {
	day, week := slotOf(m.Start)
	if f, ok := m.forecastSlot(m.Start); ok {
		diff := float64(f.MilliCPU - m.Current.MilliCPU)
		if diff < 0 {
			diff = -diff
		}
		m.Error += diff
		m.Actual += float64(m.Current.MilliCPU)
	}
	if m.Day[day] == (Demand{}) {
		m.Day[day] = m.Current
	} else {
		m.Day[day] = m.Day[day].blend(m.Current)
	}
	if !m.Seen[week] {
		m.Week[week], m.Seen[week] = m.Current, true
	} else {
		m.Week[week] = m.Week[week].blend(m.Current)
	}
}

// forecastSlot is the model's forecast for the slot holding t: the
// week's slot once a week of history holds it, else the day's, once a
// day of history does.
func (m *DemandModel) forecastSlot(t time.Time) (Demand, bool) {
	if m == nil || len(m.Day) != ForecastSlotsPerDay || t.Sub(m.Since) < ForecastHistory {
		return Demand{}, false
	}
	day, week := slotOf(t)
	if t.Sub(m.Since) >= 7*24*time.Hour && m.Seen[week] {
		return m.Week[week], true
	}
	return m.Day[day], true
}

// ForecastError is the model's relative CPU error over the slots it
// forecast (0 before it forecast any).
func (m *DemandModel) ForecastError() float64 {
	if m == nil || m.Actual <= 0 {
		return 0
	}
	return m.Error / m.Actual
}

// Forecast is the peak demand the model expects by at: the most of the
// slots holding now and at, nothing before a day of history.
func (m *DemandModel) Forecast(now, at time.Time) (Demand, bool) {
	a, ok := m.forecastSlot(now)
	if !ok {
		return Demand{}, false
	}
	b, _ := m.forecastSlot(at)
	return a.max(b), true
}

// PrewarmPods are the stand-in pods a pre-warm buys for: the demand the
// model expects by now+lead beyond what the pool's Ready nodes hold
// (their allocatable less the daemons' reserve), as pods of the pool's
// typical shape, discounted by the model's own error, at most
// MaxPrewarmPods; booting nodes are the planner's
// to count as room for them. Nothing before a day of history, when the
// forecast is within the Ready room, or when the model knows no shape.
// why names the forecast for the decision's reason.
func PrewarmPods(m *DemandModel, key types.PoolKey, now time.Time, lead time.Duration, nodes []types.NodeObservation) (pods []types.PendingPod, why string) {
	if m == nil || m.Shape.Pods == 0 || (m.Shape.MilliCPU <= 0 && m.Shape.Memory <= 0) {
		return nil, ""
	}
	f, ok := m.Forecast(now, now.Add(lead))
	if !ok {
		return nil, ""
	}
	// Trust the forecast only as far as it has come true: a model off by
	// 20 % buys for 80 % of what it expects.
	if e := min(m.ForecastError(), 1); e > 0 {
		f = Demand{MilliCPU: int64(float64(f.MilliCPU) * (1 - e)), MemMiB: int64(float64(f.MemMiB) * (1 - e)), GPUs: f.GPUs}
	}
	var room Demand
	for _, n := range nodes {
		if n.State == types.NodeReady {
			r := n.Allocatable.Sub(n.Reserved)
			room = Demand{MilliCPU: room.MilliCPU + r.MilliCPU, MemMiB: room.MemMiB + r.Memory>>20, GPUs: room.GPUs + r.GPUs}
		}
	}
	need := func(want, have, per int64) int {
		if want <= have || per <= 0 {
			return 0
		}
		return int((want - have + per - 1) / per)
	}
	count := max(need(f.MilliCPU, room.MilliCPU, m.Shape.MilliCPU), need(f.MemMiB, room.MemMiB, m.Shape.Memory>>20))
	if m.Shape.GPUs > 0 {
		count = max(count, need(f.GPUs, room.GPUs, m.Shape.GPUs))
	}
	count = min(count, MaxPrewarmPods)
	if count == 0 {
		return nil, ""
	}
	pods = make([]types.PendingPod, count)
	for i := range pods {
		pods[i] = types.PendingPod{Namespace: PrewarmNamespace, Name: fmt.Sprintf("forecast-%d", i),
			Org: key.Org, Project: key.Project, Service: key.Service, Requests: m.Shape}
	}
	why = fmt.Sprintf("forecast %.1f cores by %s against %.1f cores Ready (model error %.0f%%)",
		float64(f.MilliCPU)/1000, now.Add(lead).UTC().Format("15:04"), float64(room.MilliCPU)/1000, 100*m.ForecastError())
	return pods, why
}

// PrewarmNamespace is the namespace of a pre-warm's stand-in pods; like
// HeadroomNamespace it is no namespace a real pod can have.
const PrewarmNamespace = "visor:forecast"

// RecordPrewarm notes a pre-warm bought at now for the forecast by for,
// judging the one before it if it was not yet.
func RecordPrewarm(m *DemandModel, now, forTime time.Time, pods int) {
	if m == nil {
		return
	}
	f, _ := m.Forecast(now, forTime)
	if r := m.Prewarm; r != nil && !r.Judged && now.Before(r.For.Add(2*ForecastSlot)) {
		// The same rise, bought in steps: judged against the latest
		// forecast, after the latest slot it was for.
		r.Pods += pods
		r.Forecast, r.For = f, forTime
		return
	}
	m.Prewarm = &PrewarmRecord{At: now, For: forTime, Forecast: f, Pods: pods}
}

// ForecastKeeps says whether removing the named nodes keeps the Ready
// room the model expects the pool to need by now+lead: a pre-warmed pool
// does not give back what it bought for a rise still to come. It never
// asks for a removal; true when the model has nothing to say.
func ForecastKeeps(m *DemandModel, now time.Time, lead time.Duration, nodes []types.NodeObservation, remove []string) (bool, string) {
	f, ok := m.Forecast(now, now.Add(lead))
	if !ok || len(remove) == 0 {
		return true, ""
	}
	gone := make(map[string]bool, len(remove))
	for _, n := range remove {
		gone[n] = true
	}
	var room, before int64
	for _, n := range nodes {
		if n.State != types.NodeReady {
			continue
		}
		r := n.Allocatable.Sub(n.Reserved).MilliCPU
		before += r
		if !gone[n.Name] {
			room += r
		}
	}
	if room >= f.MilliCPU || room >= before {
		return true, ""
	}
	return false, fmt.Sprintf("the forecast expects %.1f cores by %s and %.1f would stay", float64(f.MilliCPU)/1000, now.Add(lead).UTC().Format("15:04"), float64(room)/1000)
}
