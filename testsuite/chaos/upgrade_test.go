package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestUpgradeChecks(t *testing.T) {
	tr := healthyTruth(t)
	up := readAt.Add(-5 * time.Minute)
	keys := poolKeys(tr.Spec)
	tr.Freshness = nil
	for _, k := range keys {
		tr.Freshness = append(tr.Freshness,
			// Before the new binary: the old run's samples count for nothing here.
			freshnessSample{Pool: k.WorkflowID(), At: up.Add(-time.Minute), UpAt: up.Add(-3 * time.Minute), ObservedAt: up.Add(-time.Minute), NextWake: up},
			freshnessSample{Pool: k.WorkflowID(), At: up.Add(20 * time.Second), UpAt: up, ObservedAt: up.Add(10 * time.Second), NextWake: up.Add(time.Minute)})
	}
	facts := upgradeFacts{inFlight: []string{keys[0].WorkflowID() + " (2 machines)"}, ranFor: time.Minute}
	for _, r := range checkUpgrade(tr, facts) {
		require.Empty(t, r.Violations, r.Name)
		require.NotZero(t, r.Checked, r.Name)
	}

	// The first pool is seen deciding only 90 s after the new binary was up;
	// nothing was in flight when the old one stopped.
	late := tr
	late.Freshness = append([]freshnessSample(nil), tr.Freshness...)
	for i := range late.Freshness {
		if s := &late.Freshness[i]; s.Pool == keys[0].WorkflowID() && s.UpAt.Equal(up) {
			s.At, s.ObservedAt = up.Add(90*time.Second), up.Add(80*time.Second)
		}
	}
	rs := checkUpgrade(late, upgradeFacts{ranFor: time.Minute})
	require.Len(t, rs[0].Violations, 1)
	require.Len(t, rs[1].Violations, 1)
	require.True(t, strings.Contains(rs[1].Violations[0], keys[0].WorkflowID()), rs[1].Violations[0])

	// A pool whose status never showed an observation since the restart.
	stale := tr
	stale.Freshness = append([]freshnessSample(nil), tr.Freshness...)
	for i := range stale.Freshness {
		if s := &stale.Freshness[i]; s.Pool == keys[1].WorkflowID() {
			s.ObservedAt = up.Add(-time.Minute)
		}
	}
	rs = checkUpgrade(stale, facts)
	require.Len(t, rs[1].Violations, 1)
	require.Contains(t, rs[1].Violations[0], keys[1].WorkflowID())
}
