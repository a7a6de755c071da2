// Package score replays a demand trace against the pool's control law and
// against baselines in simulated time, and scores each on node-hours, cost
// and pod pending time. The law is not copied here: the simulator calls
// law.Decide and sizing.PlanScaleUp (see law.go).
package score

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Pod is one pod of a trace: what it asks for, when it is created and when
// it goes away, relative to the trace start.
type Pod struct {
	Name     string
	Requests types.Resources
	GPUModel string
	Arrive   time.Duration
	Depart   time.Duration
	// NotEvictable is a pod no drain may evict (a PodDisruptionBudget that
	// allows no disruption, do-not-disrupt): its node stays until it ends.
	NotEvictable bool
}

// Lifetime is how long the pod wants to exist.
func (p Pod) Lifetime() time.Duration { return p.Depart - p.Arrive }

// Trace is a demand trace: pods in arrival order.
type Trace struct {
	Name string
	// Source says where the pods came from and how they were transformed.
	Source string
	Pods   []Pod
}

// Span is the time from the trace start to the last departure.
func (t Trace) Span() time.Duration {
	var end time.Duration
	for _, p := range t.Pods {
		end = max(end, p.Depart)
	}
	return end
}

// Validate names the first bad pod and field.
func (t Trace) Validate() error {
	if len(t.Pods) == 0 {
		return fmt.Errorf("trace %s: no pods", t.Name)
	}
	seen := make(map[string]bool, len(t.Pods))
	for i, p := range t.Pods {
		switch {
		case p.Name == "":
			return fmt.Errorf("trace %s: pods[%d].name is empty", t.Name, i)
		case seen[p.Name]:
			return fmt.Errorf("trace %s: pods[%d].name %q repeats", t.Name, i, p.Name)
		case p.Requests.IsNegative():
			return fmt.Errorf("trace %s: pods[%d] (%s).requests is negative: %s", t.Name, i, p.Name, p.Requests)
		case p.Arrive < 0:
			return fmt.Errorf("trace %s: pods[%d] (%s).arrive is negative", t.Name, i, p.Name)
		case p.Depart <= p.Arrive:
			return fmt.Errorf("trace %s: pods[%d] (%s).depart %s is not after arrive %s", t.Name, i, p.Name, p.Depart, p.Arrive)
		}
		seen[p.Name] = true
	}
	return nil
}

// Fingerprint is a digest of every pod's name, requests and times, so two
// runs can prove they replayed the same demand.
func (t Trace) Fingerprint() string {
	h := sha256.New()
	var b [8]byte
	put := func(v int64) { binary.LittleEndian.PutUint64(b[:], uint64(v)); h.Write(b[:]) }
	for _, p := range t.Pods {
		h.Write([]byte(p.Name))
		h.Write([]byte{0})
		h.Write([]byte(p.GPUModel))
		h.Write([]byte{0})
		put(p.Requests.MilliCPU)
		put(p.Requests.Memory)
		put(p.Requests.GPUs)
		put(int64(p.Arrive))
		put(int64(p.Depart))
		if p.NotEvictable {
			// Only when set, so traces without such pods keep their digest.
			h.Write([]byte("not-evictable"))
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}

func sortByArrival(pods []Pod) {
	slices.SortStableFunc(pods, func(a, b Pod) int {
		return cmp.Or(cmp.Compare(a.Arrive, b.Arrive), cmp.Compare(a.Name, b.Name))
	})
}

// Window keeps the pods created in [from, to), shifted so from is time zero.
// A pod that outlives to is cut at to: the window is its own trace.
func (t Trace) Window(from, to time.Duration) Trace {
	out := Trace{Name: t.Name, Source: fmt.Sprintf("%s; window [%s, %s)", t.Source, from, to)}
	for _, p := range t.Pods {
		if p.Arrive < from || p.Arrive >= to {
			continue
		}
		p.Arrive -= from
		p.Depart = min(p.Depart, to) - from
		if p.Depart > p.Arrive {
			out.Pods = append(out.Pods, p)
		}
	}
	return out
}

// Compress divides arrival times by factor and keeps each pod's lifetime,
// so the same pods crowd into less time and more of them are alive at
// once. Lifetimes are capped at maxLife (0: uncapped) so the compressed
// trace ends near span/factor.
func (t Trace) Compress(factor float64, maxLife time.Duration) (Trace, error) {
	if factor < 1 {
		return Trace{}, fmt.Errorf("compress factor must be >= 1, got %v", factor)
	}
	out := Trace{Name: t.Name, Source: fmt.Sprintf("%s; arrivals compressed %gx, lifetimes kept", t.Source, factor)}
	if maxLife > 0 {
		out.Source += fmt.Sprintf(" (capped at %s)", maxLife)
	}
	out.Pods = make([]Pod, len(t.Pods))
	for i, p := range t.Pods {
		life := p.Lifetime()
		if maxLife > 0 {
			life = min(life, maxLife)
		}
		p.Arrive = time.Duration(float64(p.Arrive) / factor).Round(time.Second)
		p.Depart = p.Arrive + life
		out.Pods[i] = p
	}
	sortByArrival(out.Pods)
	return out, nil
}

// CPUOnly keeps the pods that ask for no GPU.
func (t Trace) CPUOnly() Trace {
	out := Trace{Name: t.Name + "-cpu", Source: t.Source + "; num_gpu == 0 only"}
	for _, p := range t.Pods {
		if p.Requests.GPUs == 0 {
			out.Pods = append(out.Pods, p)
		}
	}
	return out
}

// Scale multiplies every pod's CPU and memory by f (for traces whose pods
// are far larger or smaller than the catalog's nodes).
func (t Trace) Scale(f float64) Trace {
	out := Trace{Name: t.Name, Source: fmt.Sprintf("%s; requests scaled %gx", t.Source, f), Pods: slices.Clone(t.Pods)}
	for i := range out.Pods {
		r := &out.Pods[i].Requests
		r.MilliCPU = int64(float64(r.MilliCPU) * f)
		r.Memory = int64(float64(r.Memory) * f)
	}
	return out
}
