package types

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func pendingOf(shapes, perShape int, t0 time.Time) []PendingPod {
	var pods []PendingPod
	for s := range shapes {
		for i := range perShape {
			pods = append(pods, PendingPod{Namespace: "web", Name: fmt.Sprintf("d%03d-%05d", s, i), Org: "acme", Project: "p", Service: "s",
				Requests: Resources{MilliCPU: int64(100 + s), Memory: GiB}, UnschedulableSince: t0.Add(time.Duration(i+s) * time.Second)})
		}
	}
	return pods
}

func TestSummarizeCountsEveryPodAndListsEachShapesOldest(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	o := PoolObservation{PendingPods: pendingOf(7, 1000, t0)}.SummarizePending(500, 500)
	if got := o.PendingCount(); got != 7000 {
		t.Fatalf("counted %d pods, want 7000", got)
	}
	if len(o.PendingPods) != 500 || len(o.PendingShapes) != 7 {
		t.Fatalf("listed %d in %d shapes", len(o.PendingPods), len(o.PendingShapes))
	}
	if err := o.ValidatePendingShapes(); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, p := range o.PendingPods {
		listed[p.Key()] = true
	}
	units := 0
	for _, s := range o.PendingShapes {
		if s.Listed < 500/7 || s.Listed > 500/7+1 {
			t.Fatalf("shape %s lists %d, want an even share", s.Key, s.Listed)
		}
		if !listed[s.Pod.Key()] || !s.OldestSince.Equal(s.Pod.UnschedulableSince) {
			t.Fatalf("shape %s: its oldest pod %s is not listed", s.Key, s.Pod.Key())
		}
		if !s.UnlistedSince.After(s.OldestSince) {
			t.Fatalf("shape %s: unlisted since %s, not after its listed pods", s.Key, s.UnlistedSince)
		}
	}
	for _, e := range o.PendingEntries() {
		units += e.Pods()
	}
	if units != 7000 {
		t.Fatalf("entries stand for %d pods, want 7000", units)
	}
}

func TestSummarizeBoundsShapesAndSplitsOnConstraints(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	pods := pendingOf(20, 2, t0)
	o := PoolObservation{PendingPods: pods}.SummarizePending(10, 5)
	if len(o.PendingShapes) != 5 || o.Truncated != 30 || len(o.PendingPods) != 10 {
		t.Fatalf("shapes %d truncated %d listed %d", len(o.PendingShapes), o.Truncated, len(o.PendingPods))
	}
	// Same requests, different tolerations: two shapes.
	a := PendingPod{Namespace: "n", Name: "a", Requests: Resources{MilliCPU: 1}}
	b := a
	b.Name = "b"
	b.Scheduling = &PodScheduling{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}
	if got := len(PoolObservation{PendingPods: []PendingPod{a, b}}.SummarizePending(10, 10).PendingShapes); got != 2 {
		t.Fatalf("%d shapes, want 2", got)
	}
	// Labels split shapes only when a selector could read them.
	c, d := a, a
	c.Name, d.Name = "c", "d"
	c.Scheduling, d.Scheduling = &PodScheduling{Labels: map[string]string{"x": "1"}}, &PodScheduling{Labels: map[string]string{"x": "2"}}
	if got := len(PoolObservation{PendingPods: []PendingPod{c, d}}.SummarizePending(10, 10).PendingShapes); got != 1 {
		t.Fatalf("%d shapes, want 1", got)
	}
}

func TestValidatePendingShapesNamesTheField(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	o := PoolObservation{PendingPods: pendingOf(2, 10, t0)}.SummarizePending(4, 10)
	bad := o
	bad.PendingShapes = append([]PendingShape(nil), o.PendingShapes...)
	bad.PendingShapes[1].Count = 0
	if err := bad.ValidatePendingShapes(); err == nil || err.Error() != "pendingShapes[1].count is 0, must be 1 to 10000000" {
		t.Fatalf("got %v", err)
	}
	bad.PendingShapes[1] = o.PendingShapes[1]
	bad.PendingPods = o.PendingPods[:3]
	if err := bad.ValidatePendingShapes(); err == nil {
		t.Fatal("a list that disagrees with the shapes was accepted")
	}
}

func BenchmarkSummarize50kPods(b *testing.B) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, shapes := range []int{5, 500} {
		pods := pendingOf(shapes, 50_000/shapes, t0)
		b.Run(fmt.Sprintf("shapes=%d", shapes), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				o := PoolObservation{PendingPods: pods}.SummarizePending(MaxListedPending, MaxPendingShapes)
				if o.PendingCount() != 50_000 {
					b.Fatal(o.PendingCount())
				}
			}
		})
	}
}

func TestCompareKeysOrdersAsKeysDo(t *testing.T) {
	names := [][2]string{{"a", "x"}, {"a-b", "y"}, {"a", "y"}, {"ab", "a"}, {"a.b", "c"}, {"b", ""}, {"a", "-"}}
	for _, x := range names {
		for _, y := range names {
			a, b := PendingPod{Namespace: x[0], Name: x[1]}, PendingPod{Namespace: y[0], Name: y[1]}
			want := 0
			switch {
			case a.Key() < b.Key():
				want = -1
			case a.Key() > b.Key():
				want = 1
			}
			if got := compareKeys(a, b); got != want {
				t.Errorf("compareKeys(%s, %s) = %d, want %d", a.Key(), b.Key(), got, want)
			}
		}
	}
}
