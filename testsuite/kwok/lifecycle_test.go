package kwok

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// TestRealSchedulerDriftAndExpiry rolls a drift and an expiry through
// pools on the real kube-scheduler: every node the pool had is replaced by
// one of the current template (drift: it carries the new label), its pods
// evicted through the PodDisruptionBudget onto the new nodes, and every
// pod bound again at the end.
func TestRealSchedulerDriftAndExpiry(t *testing.T) {
	e := startEnv(t)
	t.Run("lifecycle", func(t *testing.T) {
		t.Run("drift", func(t *testing.T) {
			t.Parallel()
			e.rollThrough(t, "drift", nil, func(p *types.Policy) {
				p.NodeLabels = map[string]string{"team": "checkout"}
			}, func(n corev1.Node) bool { return n.Labels["team"] == "checkout" })
		})
		// Under maxDrainingNodes 2 both nodes are renewed together.
		t.Run("drift-budget", func(t *testing.T) {
			t.Parallel()
			e.rollThrough(t, "drift-budget", nil, func(p *types.Policy) {
				p.NodeLabels = map[string]string{"team": "checkout"}
				p.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 2}
			}, func(n corev1.Node) bool { return n.Labels["team"] == "checkout" })
		})
		t.Run("expiry", func(t *testing.T) {
			t.Parallel()
			e.rollThrough(t, "expiry", nil, func(p *types.Policy) {
				p.ExpireAfter = types.Duration(20 * time.Second)
			}, nil)
		})
	})
}

// rollThrough runs a pool of six 1-CPU pods, changes its policy by change
// and waits until none of the first nodes is left, every node is new (and
// passes isNew when given), none is due and every pod is bound.
func (e *env) rollThrough(t *testing.T, name string, podSpec func(*corev1.PodSpec), change func(*types.Policy), isNew func(corev1.Node) bool) {
	service, ns := "kw-life-"+name, "kw-life-"+name
	key := poolKey(service)
	p := policy()
	p.ExpireAfter = 0
	e.createNamespace(t, ns)
	e.applyPool(t, key, p)
	w := cpuPods("web", 6, "1")
	w.spec = podSpec
	e.createWorkload(t, ns, service, w)
	e.waitAllBound(t, ns, key, []workload{w})
	first := e.poolNodes(t, key)
	t.Logf("%s: %d nodes before", name, len(first))
	evicted, stop := e.evictions(t, ns)
	defer stop()
	changed := p
	change(&changed)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := starter.SetPoolPolicy(ctx, e.stack.Client, key, changed); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	waitFor(t, 4*time.Minute, "every first node replaced", func() (bool, string) {
		nodes := e.poolNodes(t, key)
		var old, notNew []string
		for n, node := range nodes {
			if _, ok := first[n]; ok {
				old = append(old, n)
			} else if isNew != nil && !isNew(node) {
				notNew = append(notNew, n)
			}
		}
		return len(old) == 0 && len(notNew) == 0, fmt.Sprintf("old nodes %v, new nodes not of the template %v", old, notNew)
	})
	t.Logf("%s: every first node replaced %s after the change", name, time.Since(started).Round(time.Millisecond))
	if name == "expiry" {
		// Stop the churn: the new nodes would expire in turn.
		changed.ExpireAfter = 0
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := starter.SetPoolPolicy(ctx, e.stack.Client, key, changed); err != nil {
			t.Fatal(err)
		}
	}
	e.waitAllBound(t, ns, key, []workload{w})
	st := e.status(t, key)
	var log []string
	for _, d := range st.Decisions {
		log = append(log, d.Action+": "+d.Reason+" -> "+d.Outcome)
	}
	want := map[string]string{"drift": "drifted", "drift-budget": "2 × ", "expiry": "expired", "taint-tolerated": "drifted"}[name]
	if !strings.Contains(strings.Join(log, "\n"), "disrupt: lifecycle") || !strings.Contains(strings.Join(log, "\n"), want) {
		t.Errorf("no lifecycle decision saying %q:\n%s", want, strings.Join(log, "\n"))
	}
	if name != "expiry" {
		// The status is the pool's last observation: the old nodes leave
		// it at the first sample after they are gone.
		waitFor(t, 30*time.Second, "status counts no drifted node", func() (bool, string) {
			st := e.status(t, key)
			return st.Drifted == 0, fmt.Sprintf("status still counts %d drifted: %v", st.Drifted, st.Due)
		})
	}
	if evicted() == 0 {
		t.Errorf("no pod went through the eviction API: the drains did not move pods")
	}
	if st.TargetNodes > p.MaxNodes {
		t.Errorf("target %d above the ceiling %d", st.TargetNodes, p.MaxNodes)
	}
	t.Logf("%s: %d pods evicted; decisions:\n%s", name, evicted(), strings.Join(log, "\n"))
}

// dedicated is the taint TestRealSchedulerTaintDrift adds to the template.
var dedicated = corev1.Taint{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}

// TestRealSchedulerTaintDrift adds a NoSchedule taint to a pool's node
// template on the real kube-scheduler. Pods that tolerate it are rolled
// onto tainted nodes as any drift; pods that do not are kept where they
// are, the status saying which pods and which taint, and no node is
// bought for them nor drained.
func TestRealSchedulerTaintDrift(t *testing.T) {
	e := startEnv(t)
	taint := func(p *types.Policy) { p.NodeTaints = []types.Taint{types.TaintOf(dedicated)} }
	t.Run("taint", func(t *testing.T) {
		t.Run("tolerated", func(t *testing.T) {
			t.Parallel()
			e.rollThrough(t, "taint-tolerated", func(s *corev1.PodSpec) {
				s.Tolerations = []corev1.Toleration{{Key: dedicated.Key, Operator: corev1.TolerationOpEqual, Value: dedicated.Value, Effect: dedicated.Effect}}
			}, taint, func(n corev1.Node) bool {
				return slices.ContainsFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.MatchTaint(&dedicated) })
			})
		})
		t.Run("untolerated", func(t *testing.T) {
			t.Parallel()
			service, ns := "kw-life-taint-kept", "kw-life-taint-kept"
			key := poolKey(service)
			p := policy()
			p.ExpireAfter = 0
			e.createNamespace(t, ns)
			e.applyPool(t, key, p)
			w := cpuPods("web", 6, "1")
			e.createWorkload(t, ns, service, w)
			e.waitAllBound(t, ns, key, []workload{w})
			first := e.poolNodes(t, key)
			evicted, stop := e.evictions(t, ns)
			defer stop()
			changed := p
			taint(&changed)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := starter.SetPoolPolicy(ctx, e.stack.Client, key, changed); err != nil {
				t.Fatal(err)
			}
			want := "do not tolerate taint dedicated=web:NoSchedule of the current node template"
			waitFor(t, time.Minute, "the status saying the nodes are kept", func() (bool, string) {
				st := e.status(t, key)
				kept := 0
				for _, d := range st.Due {
					if strings.Contains(d, "; kept: ") && strings.Contains(d, want) {
						kept++
					}
				}
				return st.Drifted == len(first) && kept == len(first), fmt.Sprintf("drifted %d, due %v", st.Drifted, st.Due)
			})
			// Three more decisions' worth: still nothing bought or drained.
			time.Sleep(3 * p.SampleInterval.D())
			st := e.status(t, key)
			for _, d := range st.Decisions {
				if d.Action == "disrupt" {
					t.Errorf("a lifecycle decision for pods that do not tolerate the taint: %s -> %s", d.Reason, d.Outcome)
				}
			}
			if n := evicted(); n != 0 {
				t.Errorf("%d pods evicted onto nodes that refuse them", n)
			}
			now := e.poolNodes(t, key)
			for n := range first {
				if _, ok := now[n]; !ok {
					t.Errorf("%s removed", n)
				}
			}
			if len(now) != len(first) {
				t.Errorf("%d nodes, was %d: a node bought for pods that would not tolerate it", len(now), len(first))
			}
			e.waitAllBound(t, ns, key, []workload{w})
			t.Logf("kept: %v", st.Due)
		})
	})
}
