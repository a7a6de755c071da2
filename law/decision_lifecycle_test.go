package law

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// lifecycleInput: three busy nodes (80 %: no one's pods fit the others),
// an hour old, n1 in group g-old created under another template, n2 and
// n3 in g-new under the policy's.
func lifecycleInput(now time.Time) DecisionInput {
	nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.8, 0.8)}
	for i := range nodes {
		nodes[i].CreatedAt = now.Add(-time.Hour)
		nodes[i].Requested.Pods = 4
	}
	in := input(obs(now, nodes), now)
	in.Policy.MinNodes = 1
	in.Rules = AllRules()
	in.Machines = []Machine{
		{Name: "n1", Size: "sim-4c8g", GroupID: "g-old"},
		{Name: "n2", Size: "sim-4c8g", GroupID: "g-new"},
		{Name: "n3", Size: "sim-4c8g", GroupID: "g-new"},
	}
	in.Lifecycle = &Lifecycle{
		Template: in.Policy.TemplateHash(),
		Groups: map[string]GroupTemplate{
			"g-old": {Template: "0123456789ab"},
			"g-new": {Template: in.Policy.TemplateHash()},
		},
		DueSince: map[string]time.Time{},
	}
	in.SizeRoom = map[string]types.Resources{
		"sim-4c8g":  {MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
		"sim-8c16g": {MilliCPU: 8000, Memory: 20 * types.GiB, Pods: 110},
	}
	in.SizePrice = map[string]float64{"sim-4c8g": 0.20, "sim-8c16g": 0.40}
	return in
}

func TestLifecycleDriftBuysFirst(t *testing.T) {
	d := Decide(lifecycleInput(t0))
	if d.Action != ActionDisrupt || d.Replacing == nil {
		t.Fatalf("got %s (%s; blocked %v; skipped %v), want a replacement bought", d.Action, d.Reason, d.Blocked, d.Skipped)
	}
	r := d.Replacing
	if strings.Join(r.Old, ",") != "n1" || r.Size != "sim-4c8g" || !r.Since.Equal(t0) || !strings.Contains(r.Lifecycle, "drifted") {
		t.Fatalf("replacement %+v, want n1 by one sim-4c8g since now, drifted", r)
	}
	if len(d.RemoveNodes) != 0 {
		t.Errorf("drains %v before the new node is Ready", d.RemoveNodes)
	}
	if !strings.Contains(d.Reason, "n1") || !strings.Contains(d.Reason, "another node template") {
		t.Errorf("reason %q does not say which node and why", d.Reason)
	}
}

func TestLifecycleExpiry(t *testing.T) {
	in := lifecycleInput(t0)
	in.Lifecycle.Groups["g-old"] = GroupTemplate{Template: in.Lifecycle.Template}
	in.Policy.ExpireAfter = types.Duration(2 * time.Hour)
	in.Observation.Nodes[2].CreatedAt = t0.Add(-3 * time.Hour)
	d := Decide(in)
	if d.Action != ActionDisrupt || d.Replacing == nil || d.Replacing.Old[0] != "n3" || !strings.Contains(d.Replacing.Lifecycle, "expired") {
		t.Fatalf("got %s %+v (%s), want n3 replaced as expired", d.Action, d.Replacing, d.Reason)
	}
	// Nothing expired yet: the law wakes when the first node will.
	in.Policy.StaleAfter = types.Duration(2 * time.Hour)
	in.Observation.Nodes[2].CreatedAt = t0.Add(-90 * time.Minute)
	d = Decide(in)
	if d.Action != ActionNone {
		t.Fatalf("got %s (%s), want nothing before expiry", d.Action, d.Reason)
	}
	if want := t0.Add(30 * time.Minute); !d.WakeAt.Equal(want) || d.WakeReason != "node expires" {
		t.Errorf("wakes at %s (%s), want %s for the expiry", d.WakeAt, d.WakeReason, want)
	}
	// expireAfter 0 (a policy recorded before it): never.
	in.Policy.ExpireAfter = 0
	in.Observation.Nodes[2].CreatedAt = t0.Add(-9000 * time.Hour)
	if d := Decide(in); d.Action != ActionNone {
		t.Fatalf("got %s (%s) with expiry off", d.Action, d.Reason)
	}
}

func TestLifecycleDrainsWhenOthersHoldThePods(t *testing.T) {
	in := lifecycleInput(t0)
	in.Observation.Nodes[0] = withPods(node("n1", 0.2, 0.2), 2, types.Resources{MilliCPU: 400, Memory: types.GiB})
	in.Observation.Nodes[1] = node("n2", 0.5, 0.5)
	d := Decide(in)
	if d.Action != ActionDisrupt || d.Replacing != nil || strings.Join(d.RemoveNodes, ",") != "n1" || len(d.Forced) != 0 {
		t.Fatalf("got %s remove %v replacing %+v forced %v (%s), want n1 drained at once", d.Action, d.RemoveNodes, d.Replacing, d.Forced, d.Reason)
	}
}

func TestLifecycleBudgetBoundsDrains(t *testing.T) {
	in := lifecycleInput(t0)
	for i := range in.Observation.Nodes {
		in.Observation.Nodes[i] = withPods(node(in.Observation.Nodes[i].Name, 0.1, 0.1), 1, types.Resources{MilliCPU: 400, Memory: types.GiB})
		in.Machines[i].GroupID = "g-old"
	}
	in.Observation.Nodes = append(in.Observation.Nodes, node("n4", 0.1, 0.1))
	in.Policy.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 2}
	d := Decide(in)
	if d.Action != ActionDisrupt || len(d.RemoveNodes) != 2 {
		t.Fatalf("got %s remove %v (%s), want 2 drained: the budget's", d.Action, d.RemoveNodes, d.Reason)
	}
	// One already draining leaves one slot.
	in.Observation.Nodes[3].State = types.NodeCordoned
	if d := Decide(in); len(d.RemoveNodes) != 1 {
		t.Fatalf("remove %v with one draining, want 1", d.RemoveNodes)
	}
	// Two draining leave none.
	in.Observation.Nodes[2].State = types.NodeCordoned
	if d := Decide(in); d.Action == ActionDisrupt || !strings.Contains(strings.Join(d.Blocked, ";"), "disruption budget") {
		t.Fatalf("got %s remove %v blocked %v, want the budget to block", d.Action, d.RemoveNodes, d.Blocked)
	}
}

func TestLifecycleHoldsBack(t *testing.T) {
	cases := map[string]func(*DecisionInput){
		"without the rule":                    func(in *DecisionInput) { in.Rules.Lifecycle = false },
		"without lifecycle input":             func(in *DecisionInput) { in.Lifecycle = nil },
		"template unchanged":                  func(in *DecisionInput) { in.Lifecycle.Groups["g-old"] = GroupTemplate{Template: in.Lifecycle.Template} },
		"pods pending":                        func(in *DecisionInput) { in.Observation.PendingPods = []types.PendingPod{pending("p", t0)} },
		"stale observation":                   func(in *DecisionInput) { in.Observation.ObservedAt = t0.Add(-time.Hour) },
		"scale-down gated":                    func(in *DecisionInput) { in.Gate.AllowScaleDown = false },
		"do-not-disrupt":                      func(in *DecisionInput) { in.Observation.Nodes[0].DrainBlockers = []string{"pod a/b: do-not-disrupt"} },
		"drain failed, retry later":           func(in *DecisionInput) { in.DrainBlocked["n1"] = t0.Add(time.Minute) },
		"at the ceiling":                      func(in *DecisionInput) { in.Policy.MaxNodes = 3 },
		"a node still booting":                func(in *DecisionInput) { in.InFlightNodes = 1 },
		"no observation since the last drain": func(in *DecisionInput) { in.LastScaleDown = t0 },
		"cordoned already":                    func(in *DecisionInput) { in.Observation.Nodes[0].State = types.NodeCordoned },
		"budget full": func(in *DecisionInput) {
			in.Policy.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 1}
			in.Observation.Nodes = append(in.Observation.Nodes, types.NodeObservation{Name: "n9", State: types.NodeCordoned})
		},
		"forbidden window": func(in *DecisionInput) {
			in.Policy.Disruption = &types.DisruptionBudget{Windows: []types.DisruptionWindow{{Schedule: "* * * * *", Duration: types.Duration(time.Hour), ScaleDown: types.ScaleDownForbidden}}}
		},
		"consolidation's replacement under way": func(in *DecisionInput) {
			in.Replacing = &Replacement{Old: []string{"n3"}, Size: "sim-8c16g", Since: t0.Add(-time.Minute)}
		},
		"size no longer allowed, none known to hold it": func(in *DecisionInput) {
			in.Policy.AllowedSizes = []string{"sim-1c2g"}
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			in := lifecycleInput(t0)
			change(&in)
			if d := Decide(in); d.Action == ActionDisrupt {
				t.Fatalf("disrupted: remove %v replacing %+v (%s)", d.RemoveNodes, d.Replacing, d.Reason)
			}
		})
	}
}

func TestLifecycleReplacementDrain(t *testing.T) {
	newNode := func(in *DecisionInput, cpu float64) {
		nn := node("n9", cpu, cpu)
		nn.CreatedAt = t0.Add(-time.Minute)
		in.Observation.Nodes = append(in.Observation.Nodes, nn)
	}
	live := func(in *DecisionInput) {
		in.Replacing = &Replacement{Old: []string{"n1"}, Size: "sim-4c8g", Since: t0.Add(-2 * time.Minute), Lifecycle: "drifted: x"}
	}
	t.Run("new node Ready with room: drain", func(t *testing.T) {
		in := lifecycleInput(t0)
		live(&in)
		newNode(&in, 0)
		d := Decide(in)
		if d.Action != ActionDisrupt || strings.Join(d.RemoveNodes, ",") != "n1" || d.Replacing != nil {
			t.Fatalf("got %s remove %v (%s; %v %v), want n1 drained", d.Action, d.RemoveNodes, d.Reason, d.Blocked, d.Skipped)
		}
		if !strings.Contains(d.Reason, "n9") {
			t.Errorf("reason %q does not name the new node", d.Reason)
		}
	})
	t.Run("old node's drain failed: drained again at its retry time", func(t *testing.T) {
		in := lifecycleInput(t0)
		live(&in)
		newNode(&in, 0)
		in.DrainBlocked = map[string]time.Time{"n1": t0.Add(30 * time.Second)}
		d := Decide(in)
		if d.Action == ActionDisrupt || !strings.Contains(strings.Join(d.Skipped, ";"), "n1: its drain failed, retried at") {
			t.Fatalf("got %s remove %v (%s; skipped %v), want n1 held until its retry time", d.Action, d.RemoveNodes, d.Reason, d.Skipped)
		}
		if want := t0.Add(30 * time.Second); !d.WakeAt.Equal(want) {
			t.Errorf("wakes at %s (%s), want %s to retry the drain", d.WakeAt, d.WakeReason, want)
		}
		if d.Replacing != nil {
			t.Errorf("bought again (%+v) while the replacement waits for the retry", d.Replacing)
		}
		in.Now = t0.Add(30 * time.Second)
		in.Observation.ObservedAt = in.Now
		if d := Decide(in); d.Action != ActionDisrupt || strings.Join(d.RemoveNodes, ",") != "n1" {
			t.Fatalf("at the retry time got %s remove %v (%v %v), want n1 drained", d.Action, d.RemoveNodes, d.Blocked, d.Skipped)
		}
	})
	t.Run("new node's creation time kept to the second", func(t *testing.T) {
		in := lifecycleInput(t0)
		live(&in)
		in.Replacing.Since = t0.Add(-2*time.Minute + 700*time.Millisecond)
		newNode(&in, 0)
		in.Observation.Nodes[3].CreatedAt = t0.Add(-2 * time.Minute)
		if d := Decide(in); d.Action != ActionDisrupt || strings.Join(d.RemoveNodes, ",") != "n1" {
			t.Fatalf("got %s remove %v (%v), want n1 drained: its new node was created in the second it was bought", d.Action, d.RemoveNodes, d.Blocked)
		}
	})
	t.Run("new node not Ready: wait, buy nothing more", func(t *testing.T) {
		in := lifecycleInput(t0)
		live(&in)
		d := Decide(in)
		if d.Action != ActionNone || !strings.Contains(strings.Join(d.Blocked, ";"), "waiting for 1 new node") {
			t.Fatalf("got %s (%s; %v), want a wait", d.Action, d.Reason, d.Blocked)
		}
	})
	t.Run("its room taken: no drain", func(t *testing.T) {
		in := lifecycleInput(t0)
		live(&in)
		newNode(&in, 0.5)
		if d := Decide(in); d.Action == ActionDisrupt {
			t.Fatalf("drained %v onto a node without room (%s)", d.RemoveNodes, d.Reason)
		}
	})
	t.Run("lapsed after the provision timeout: buys again", func(t *testing.T) {
		in := lifecycleInput(t0)
		live(&in)
		in.Replacing.Since = t0.Add(-time.Hour)
		if d := Decide(in); d.Action != ActionDisrupt || d.Replacing == nil {
			t.Fatalf("got %s (%s), want a new replacement after the lapse", d.Action, d.Reason)
		}
	})
}

func TestLifecycleTerminationGracePeriod(t *testing.T) {
	in := lifecycleInput(t0)
	in.Observation.Nodes[0] = withPods(node("n1", 0.2, 0.2), 2, types.Resources{MilliCPU: 400, Memory: types.GiB})
	in.Observation.Nodes[0].DrainBlockers = []string{"pod a/b: do-not-disrupt"}
	in.Observation.Nodes[1] = node("n2", 0.5, 0.5)
	in.Policy.TerminationGracePeriod = types.Duration(time.Hour)
	in.Lifecycle.DueSince["n1"] = t0.Add(-30 * time.Minute)
	in.Policy.StaleAfter = types.Duration(2 * time.Hour)
	d := Decide(in)
	if d.Action == ActionDisrupt {
		t.Fatalf("disrupted a do-not-disrupt node within its grace period: %v", d.RemoveNodes)
	}
	if want := t0.Add(30 * time.Minute); !d.WakeAt.Equal(want) {
		t.Errorf("wakes at %s (%s), want %s when the grace period ends", d.WakeAt, d.WakeReason, want)
	}
	in.Lifecycle.DueSince["n1"] = t0.Add(-time.Hour)
	d = Decide(in)
	if d.Action != ActionDisrupt || strings.Join(d.RemoveNodes, ",") != "n1" || strings.Join(d.Forced, ",") != "n1" {
		t.Fatalf("got %s remove %v forced %v (%s), want n1 forced past its grace period", d.Action, d.RemoveNodes, d.Forced, d.Reason)
	}
}

func TestDueNodes(t *testing.T) {
	p := types.DefaultPolicy()
	tmpl := p.TemplateHash()
	o := obs(t0, []types.NodeObservation{node("a", 0.5, 0.5), node("b", 0.5, 0.5), node("c", 0.5, 0.5), node("d", 0.5, 0.5), node("e", 0.5, 0.5)})
	for i := range o.Nodes {
		o.Nodes[i].CreatedAt = t0.Add(-time.Hour)
	}
	o.Nodes[3].CreatedAt = t0.Add(-800 * time.Hour)
	o.Nodes[4].CreatedAt = t0.Add(-900 * time.Hour)
	o.Nodes[2].Size = "sim-gone"
	p.AllowedSizes = []string{"sim-4c8g"}
	p.Zones = []string{"z1"}
	machines := []Machine{{Name: "a", GroupID: "spot"}, {Name: "b", GroupID: "z2"}, {Name: "c", GroupID: "ok"}, {Name: "d", GroupID: "ok"}, {Name: "e", GroupID: "ok"}}
	lc := &Lifecycle{Template: tmpl, Groups: map[string]GroupTemplate{
		"spot": {Template: tmpl, CapacityType: types.CapacitySpot},
		"z2":   {Template: tmpl, Zone: "z2"},
		"ok":   {Template: tmpl, Zone: "z1"},
	}}
	due := DueNodes(p, lc, o, machines, t0)
	var got []string
	for _, d := range due {
		got = append(got, d.Node+":"+kind(d))
	}
	if want := "e:expired,d:expired,a:drifted,b:drifted,c:drifted"; strings.Join(got, ",") != want {
		t.Fatalf("due %s, want %s", strings.Join(got, ","), want)
	}
	for _, d := range due {
		want := map[string]string{"a": "capacity type spot", "b": "zone z2", "c": "size sim-gone", "d": "expireAfter 720h", "e": "expireAfter 720h"}[d.Node]
		if !strings.Contains(d.Reason, want) {
			t.Errorf("%s: reason %q does not say %q", d.Node, d.Reason, want)
		}
	}
	if DueNodes(p, nil, o, machines, t0) != nil {
		t.Error("nodes due without lifecycle input")
	}
}

func TestUpdateDueSince(t *testing.T) {
	prev := map[string]time.Time{"a": t0.Add(-time.Hour), "gone": t0.Add(-time.Hour)}
	next := UpdateDueSince(prev, []Due{{Node: "a"}, {Node: "b"}}, t0)
	if len(next) != 2 || !next["a"].Equal(t0.Add(-time.Hour)) || !next["b"].Equal(t0) {
		t.Fatalf("got %v, want a kept, b started now, gone dropped", next)
	}
}

func TestTemplateHash(t *testing.T) {
	p := types.DefaultPolicy()
	base := p.TemplateHash()
	p.NodeLabels = map[string]string{"team": "a", "tier": "web"}
	withLabels := p.TemplateHash()
	p.NodeLabels = map[string]string{"tier": "web", "team": "a"}
	if p.TemplateHash() != withLabels {
		t.Error("hash depends on map order")
	}
	if withLabels == base {
		t.Error("labels do not change the hash")
	}
	p.NodeTaints = []types.Taint{{Key: "gpu", Effect: "NoSchedule"}}
	if p.TemplateHash() == withLabels {
		t.Error("taints do not change the hash")
	}
	p.AllowedSizes = []string{"x"}
	if h := p.TemplateHash(); h != p.TemplateHash() || len(h) != 12 {
		t.Errorf("hash %q unstable or not 12 hex digits", h)
	}
}

// With a drain budget, the due nodes of one replacement size are renewed
// together, as many as its slots allow; without one, one at a time.
func TestLifecycleRenewsTogetherWithinTheBudget(t *testing.T) {
	in := lifecycleInput(t0)
	for i := range in.Machines {
		in.Machines[i].GroupID = "g-old"
	}
	if d := Decide(in); d.Replacing == nil || len(d.Replacing.Old) != 1 {
		t.Fatalf("without a budget: %+v (%s), want one renewal", d.Replacing, d.Reason)
	}
	in.Policy.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 2}
	d := Decide(in)
	if d.Action != ActionDisrupt || d.Replacing == nil || strings.Join(d.Replacing.Old, ",") != "n1,n2" {
		t.Fatalf("with 2 slots: %+v (%s), want n1,n2 renewed together", d.Replacing, d.Reason)
	}
	if !strings.Contains(d.Reason, "2 × sim-4c8g bought first") {
		t.Errorf("reason %q does not say what is bought", d.Reason)
	}
	// The ceiling bounds the batch: one more node only.
	in.Policy.MaxNodes = 4
	if d := Decide(in); d.Replacing == nil || len(d.Replacing.Old) != 1 {
		t.Fatalf("one below the ceiling: %+v, want one renewal", d.Replacing)
	}
	// Their drain waits for both new nodes, and drains both at once.
	in.Policy.MaxNodes = 50
	in.Replacing = &Replacement{Old: []string{"n1", "n2"}, Size: "sim-4c8g", Since: t0.Add(-2 * time.Minute), Lifecycle: "drifted"}
	fresh := func(name string) types.NodeObservation {
		n := node(name, 0, 0)
		n.CreatedAt = t0.Add(-time.Minute)
		return n
	}
	in.Observation.Nodes = append(in.Observation.Nodes, fresh("m1"))
	if d := Decide(in); d.Action == ActionDisrupt {
		t.Fatalf("drained %v with one of two new nodes Ready", d.RemoveNodes)
	}
	in.Observation.Nodes = append(in.Observation.Nodes, fresh("m2"))
	d = Decide(in)
	if d.Action != ActionDisrupt || strings.Join(d.RemoveNodes, ",") != "n1,n2" {
		t.Fatalf("got %s remove %v (%s; %v %v), want n1,n2 drained", d.Action, d.RemoveNodes, d.Reason, d.Blocked, d.Skipped)
	}
	// Two old nodes' pods do not share one new node's room.
	in.Observation.Nodes[len(in.Observation.Nodes)-1] = fresh("m2")
	in.Observation.Nodes[len(in.Observation.Nodes)-1].Requested.MilliCPU = 3000
	if d := Decide(in); d.Action == ActionDisrupt {
		t.Fatalf("drained %v although m2 has room for neither", d.RemoveNodes)
	}
}

// A drift that adds a taint: n1's pods must tolerate it to be drained,
// since every node bought now carries it.
func TestLifecycleKeepsPodsThatDoNotTolerateTheNewTaint(t *testing.T) {
	taint := types.Taint{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}
	tainted := func(taints []types.Taint, sets []types.PodTolerations) DecisionInput {
		in := lifecycleInput(t0)
		in.Policy.NodeTaints = taints
		in.Lifecycle.Template = in.Policy.TemplateHash()
		in.Lifecycle.Groups["g-new"] = GroupTemplate{Template: in.Policy.TemplateHash()}
		in.Observation.Nodes[0].PodTolerations = sets
		return in
	}
	none := []types.PodTolerations{{Pod: "web/a", Count: 4}}
	exists := []types.PodTolerations{{Pod: "web/a", Count: 4, Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}}
	for _, c := range []struct {
		name string
		in   DecisionInput
		kept string // "" : n1's renewal is bought
	}{
		{"pods without tolerations: kept", tainted([]types.Taint{taint}, none), "4 pods (web/a) do not tolerate taint dedicated=web:NoSchedule of the current node template"},
		{"a pod of another value: kept", tainted([]types.Taint{taint}, []types.PodTolerations{
			{Pod: "web/a", Count: 3, Tolerations: exists[0].Tolerations},
			{Pod: "web/z", Count: 1, Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}}},
		}), "1 pod (web/z) do not tolerate taint dedicated=web:NoSchedule"},
		{"pods of sets not listed: kept", tainted([]types.Taint{taint}, []types.PodTolerations{exists[0], {Count: 2}}), "2 pods (pods of toleration sets not listed)"},
		{"NoExecute: kept", tainted([]types.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoExecute}}, exists), "taint gpu:NoExecute"},
		{"pods tolerate it: renewed", tainted([]types.Taint{taint}, exists), ""},
		{"PreferNoSchedule repels no pod: renewed", tainted([]types.Taint{{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}, none), ""},
		{"the observer does not say: renewed", tainted([]types.Taint{taint}, nil), ""},
		{"no taint: renewed", tainted(nil, none), ""},
		{"a run before the rule: renewed", func() DecisionInput {
			in := tainted([]types.Taint{taint}, none)
			in.Rules.RenewalTolerations = false
			return in
		}(), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.in)
			if c.kept == "" {
				if d.Action != ActionDisrupt || d.Replacing == nil || d.Replacing.Old[0] != "n1" {
					t.Fatalf("got %s (%s; skipped %v), want n1's renewal bought", d.Action, d.Reason, d.Skipped)
				}
				return
			}
			if d.Action == ActionDisrupt {
				t.Fatalf("renewed %v / drained %v although its pods do not tolerate the new taint (%s)", d.Replacing, d.RemoveNodes, d.Reason)
			}
			skipped := strings.Join(d.Skipped, ";")
			if !strings.Contains(skipped, "n1 is drifted but kept: ") || !strings.Contains(skipped, c.kept) {
				t.Fatalf("skipped %q, want n1 kept saying %q", skipped, c.kept)
			}
		})
	}
	t.Run("past terminationGracePeriod: still kept", func(t *testing.T) {
		in := tainted([]types.Taint{taint}, none)
		in.Policy.TerminationGracePeriod = types.Duration(time.Minute)
		in.Lifecycle.DueSince["n1"] = t0.Add(-time.Hour)
		if d := Decide(in); d.Action == ActionDisrupt {
			t.Fatalf("disrupted n1 past its grace period onto nodes that refuse its pods: %s", d.Reason)
		}
	})
	t.Run("renewal under way: the old node not drained", func(t *testing.T) {
		in := tainted([]types.Taint{taint}, none)
		in.Replacing = &Replacement{Old: []string{"n1"}, Size: "sim-4c8g", Since: t0.Add(-2 * time.Minute), Lifecycle: "drifted: x"}
		nn := node("n9", 0, 0)
		nn.CreatedAt = t0.Add(-time.Minute)
		in.Observation.Nodes = append(in.Observation.Nodes, nn)
		d := Decide(in)
		if d.Action == ActionDisrupt {
			t.Fatalf("drained %v onto a node whose taint its pods do not tolerate", d.RemoveNodes)
		}
		if s := strings.Join(d.Skipped, ";"); !strings.Contains(s, "n1: not drained: 4 pods (web/a) do not tolerate taint dedicated=web:NoSchedule") {
			t.Fatalf("skipped %q, want why n1 is not drained", s)
		}
	})
}
