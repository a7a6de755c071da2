package law

import (
	"testing"
	"time"
)

func TestBatchClosesAfterOneQuietSecondOrTenSeconds(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name   string
		since  []time.Duration // each pod's UnschedulableSince, from t0
		batch  bool
		want   Action
		wakeAt time.Time
	}{
		{"one pod, a second quiet", []time.Duration{-2 * time.Second}, true, ActionScaleUp, time.Time{}},
		{"one pod, just arrived", []time.Duration{-500 * time.Millisecond}, true, ActionNone, at(500 * time.Millisecond)},
		{"a burst still arriving", []time.Duration{-4 * time.Second, -2 * time.Second, -300 * time.Millisecond}, true, ActionNone, at(700 * time.Millisecond)},
		{"ten seconds since the first", []time.Duration{-10 * time.Second, -5 * time.Second, -200 * time.Millisecond}, true, ActionScaleUp, time.Time{}},
		{"without batching the threshold holds", []time.Duration{-10 * time.Second}, false, ActionNone, at(50 * time.Second)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := obs(t0, threeNodes())
			for i, s := range tc.since {
				o.PendingPods = append(o.PendingPods, pending(string(rune('a'+i)), at(s)))
			}
			in := input(o, t0)
			in.Policy.ScaleUpCooldown = 0
			in.Rules.Batch = tc.batch
			d := Decide(in)
			if d.Action != tc.want {
				t.Fatalf("action %s (%s), want %s", d.Action, d.Reason, tc.want)
			}
			if tc.want == ActionScaleUp && len(d.Pods) != len(tc.since) {
				t.Errorf("sized %d pods, want the whole batch of %d", len(d.Pods), len(tc.since))
			}
			if !tc.wakeAt.IsZero() && !d.WakeAt.Equal(tc.wakeAt) {
				t.Errorf("wake at %s (%s), want %s", d.WakeAt, d.WakeReason, tc.wakeAt)
			}
		})
	}
}
