package kwok

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/kwok"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
)

// perfEnv turns on the workloads of Karpenter's performance suite
// (kubernetes-sigs/karpenter test/suites/performance): make bench-perf
// runs them one at a time; they are not part of make test.
const perfEnv = "VISOR_KWOK_PERF"

// perfQuiet is how long nothing may change before consolidation counts
// as settled: Karpenter's suite ends a consolidation phase after three
// minutes without a draining node, and its time limits include them.
const perfQuiet = 3 * time.Minute

// perfCatalogEnv=wide runs every workload on wideCatalog, not only the one
// that needs it: how much of a miss is kwok's catalog and how much the pool.
const perfCatalogEnv = "VISOR_KWOK_PERF_CATALOG"

// perfWaitEnv caps how long a run waits for consolidation to settle (a Go
// duration); unset, it waits Karpenter's whole threshold. A capped run that
// has not settled fails the same way.
const perfWaitEnv = "VISOR_KWOK_PERF_MAX_WAIT"

// perfDeployment is one of a workload's deployments: its pods at scale-out
// and after the scale-in that starts consolidation.
type perfDeployment struct {
	workload
	scaleIn     int32
	annotations map[string]string
}

// perfLimits are Karpenter's thresholds for one workload. Utilization is
// requested over allocatable on the pool's nodes; a zero bound is none.
type perfLimits struct {
	scaleOut                    time.Duration
	scaleOutCPU, scaleOutMemory float64
	consolidation               time.Duration
	afterCPU, afterMemory       float64
}

type perfCase struct {
	id          string
	deployments []perfDeployment
	limits      perfLimits
	// catalog replaces kwok.Catalog(); nil keeps it.
	catalog []types.InstanceType
}

// The two deployments of Karpenter's basic workload; the others add to them.
func smallApp(replicas, scaleIn int32) perfDeployment {
	return perfDeployment{workload: workload{name: "small-resource-app", replicas: replicas, cpu: "900m", mem: "3100Mi"}, scaleIn: scaleIn}
}

func largeApp(replicas, scaleIn int32) perfDeployment {
	return perfDeployment{workload: workload{name: "large-resource-app", replicas: replicas, cpu: "3500m", mem: "28Gi"}, scaleIn: scaleIn}
}

// hostnameSpread is Karpenter's test.WithHostnameSpread: at most one pod
// more on any node than on another, never scheduled otherwise.
func hostnameSpread(app string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, spread(app, corev1.LabelHostname))
	}
}

func spread(app, key string) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

// TestPerfBasic is Karpenter's "Basic Deployment": 500 pods of 900m/3100Mi
// and 500 of 3500m/28Gi; all bound within 2 min, reserved CPU over 53 %
// and memory over 65 %; then 350 of each, consolidated within 20 min.
func TestPerfBasic(t *testing.T) {
	runPerf(t, perfCase{
		id:          "perf-basic",
		deployments: []perfDeployment{smallApp(500, 350), largeApp(500, 350)},
		limits:      perfLimits{scaleOut: 2 * time.Minute, scaleOutCPU: 0.53, scaleOutMemory: 0.65, consolidation: 20 * time.Minute},
	})
}

// TestPerfHostnameSpreading is Karpenter's "Host Name Spreading": the
// basic workload with the small pods spread over hostnames; within 5 min,
// CPU over 38 %, memory over 40 %, and the same after consolidation
// (Karpenter gives it 30 min).
func TestPerfHostnameSpreading(t *testing.T) {
	small := smallApp(500, 350)
	small.spec = hostnameSpread(small.name)
	runPerf(t, perfCase{
		id:          "perf-spread",
		deployments: []perfDeployment{small, largeApp(500, 350)},
		limits: perfLimits{scaleOut: 5 * time.Minute, scaleOutCPU: 0.38, scaleOutMemory: 0.40,
			consolidation: 30 * time.Minute, afterCPU: 0.38, afterMemory: 0.40},
	})
}

// TestPerfDoNotDisrupt is Karpenter's "Do Not Disrupt": the hostname
// spreading workload plus 100 pods of 900m/450Mi marked
// karpenter.sh/do-not-disrupt; within 4 min, CPU over 38 %, memory over
// 40 %; then 250 small and 250 large (the protected stay), consolidated
// within 35 min with the same utilization, and some node that held a
// protected pod still there. Visor's own bar is stricter: no protected
// pod is evicted at all.
func TestPerfDoNotDisrupt(t *testing.T) {
	small := smallApp(500, 250)
	small.spec = hostnameSpread(small.name)
	protected := perfDeployment{workload: workload{name: "do-not-disrupt-app", replicas: 100, cpu: "900m", mem: "450Mi"}, scaleIn: 100,
		annotations: map[string]string{kubernetes.AnnotationDoNotDisrupt: "true"}}
	runPerf(t, perfCase{
		id:          "perf-dnd",
		deployments: []perfDeployment{small, largeApp(500, 250), protected},
		limits: perfLimits{scaleOut: 4 * time.Minute, scaleOutCPU: 0.38, scaleOutMemory: 0.40,
			consolidation: 35 * time.Minute, afterCPU: 0.38, afterMemory: 0.40},
	})
}

// TestPerfWideDeployments is Karpenter's "Wide Deployments": 30
// deployments from 225m to 3.8 CPU and 300Mi to 64Gi, 1,000 pods, each
// spread over zones (DoNotSchedule), three with hostname anti-affinity
// and three spread over hostnames; within 5 min, CPU and memory over
// 20 %; then 700 pods, consolidated within 40 min, still over 20 %.
// kwok's largest general size (8 CPU, 32 GiB, 31.5 GiB allocatable) holds
// no 32Gi or 64Gi pod, so this workload adds two 16-CPU sizes of 64 and
// 128 GiB (within Karpenter's suite's under-32-CPU requirement), priced
// as the catalog prices CPU and memory.
func TestPerfWideDeployments(t *testing.T) {
	cpus := []string{
		"240m", "450m", "650m", "900m", "1400m", "1900m", "2400m", "2800m", "3300m", "3700m",
		"2300m", "900m", "1300m", "2800m", "1800m", "1850m", "3300m", "3800m", "225m", "450m",
		"700m", "900m", "1300m", "1800m", "2400m", "2800m", "3400m", "3800m", "3300m", "2800m",
	}
	mems := []string{
		"300Mi", "400Mi", "700Mi", "1Gi", "2Gi", "4Gi", "8Gi", "4Gi", "16Gi", "10Gi",
		"64Gi", "30Gi", "32Gi", "32Gi", "30Gi", "20Gi", "30Gi", "300Mi", "500Mi", "750Mi",
		"1Gi", "2Gi", "4Gi", "8Gi", "16Gi", "32Gi", "28Gi", "64Gi", "13Gi", "24Gi",
	}
	var deps []perfDeployment
	for i := range 30 {
		replicas, scaleIn := int32(35), int32(25)
		if i >= 20 {
			replicas, scaleIn = 30, 20
		}
		name := fmt.Sprintf("wide-deployment-%d", i+1)
		antiAffinity, hostSpread := i < 3, i >= 3 && i < 6
		deps = append(deps, perfDeployment{scaleIn: scaleIn, workload: workload{name: name, replicas: replicas, cpu: cpus[i], mem: mems[i],
			spec: func(s *corev1.PodSpec) {
				s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, spread(name, corev1.LabelTopologyZone))
				if hostSpread {
					s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, spread(name, corev1.LabelHostname))
				}
				if antiAffinity {
					s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname,
							LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}}},
					}}
				}
			}}})
	}
	runPerf(t, perfCase{
		id:          "perf-wide",
		deployments: deps,
		catalog:     wideCatalog(),
		limits: perfLimits{scaleOut: 5 * time.Minute, scaleOutCPU: 0.20, scaleOutMemory: 0.20,
			consolidation: 40 * time.Minute, afterCPU: 0.20, afterMemory: 0.20},
	})
}

// wideCatalog is kwok's catalog with 16-CPU sizes of 64 and 128 GiB, at
// the default sizes' own rates (each of them costs $0.0075 a CPU-hour
// plus $0.00125 a GiB-hour).
func wideCatalog() []types.InstanceType {
	cat := kwok.Catalog()
	i := slices.IndexFunc(cat, func(it types.InstanceType) bool { return it.Name == "kwok-8c32g" })
	base := cat[i]
	for _, gib := range []int64{64, 128} {
		it := base
		it.Zones = slices.Clone(base.Zones)
		it.Name = fmt.Sprintf("kwok-16c%dg", gib)
		it.MilliCPU, it.Memory = 16000, gib*types.GiB
		it.HourlyPrice = 0.0075*16 + 0.00125*float64(gib)
		cat = append(cat, it)
	}
	return cat
}

// perfPolicy is the pool Karpenter's suite gives its NodePool: no limits,
// consolidation of empty or underused nodes after 30 s, every node
// disruptible at once (budget 100 %).
func perfPolicy() types.Policy {
	p := policy()
	p.MaxNodes = 1000
	p.ConsolidationThreshold = 1
	p.ConsolidateAfter = types.Duration(30 * time.Second)
	// kube-scheduler works through a backlog of a thousand pods: a node it
	// has not filled yet is not idle, as the fast policy's 4 s would judge.
	p.IdleWindow = types.Duration(time.Minute)
	return p
}

// utilization is reserved CPU and memory on the pool's nodes, two ways:
// the sum of the requests of the pods on them over the sum of their
// allocatable, and Karpenter's (its Monitor.AvgUtilization), the mean
// over nodes of each node's requested share.
type utilization struct{ cpu, mem, meanCPU, meanMem float64 }

func (u utilization) String() string {
	return fmt.Sprintf("CPU %.1f %% (mean per node %.1f %%), memory %.1f %% (mean per node %.1f %%)", 100*u.cpu, 100*u.meanCPU, 100*u.mem, 100*u.meanMem)
}

func (e *env) utilization(t *testing.T, key types.PoolKey) utilization {
	t.Helper()
	nodes := e.poolNodes(t, key)
	ctx, cancel := ctxFor(30 * time.Second)
	defer cancel()
	pods, err := e.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type use struct{ cpu, mem int64 }
	used := map[string]use{}
	for _, p := range pods.Items {
		if _, ok := nodes[p.Spec.NodeName]; !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		u := used[p.Spec.NodeName]
		for _, c := range p.Spec.Containers {
			u.cpu += c.Resources.Requests.Cpu().MilliValue()
			u.mem += c.Resources.Requests.Memory().Value()
		}
		used[p.Spec.NodeName] = u
	}
	var out utilization
	var allocCPU, allocMem, usedCPU, usedMem int64
	for name, n := range nodes {
		a := n.Status.Allocatable
		if a.Cpu().IsZero() || a.Memory().IsZero() {
			continue
		}
		u := used[name]
		allocCPU += a.Cpu().MilliValue()
		allocMem += a.Memory().Value()
		usedCPU += u.cpu
		usedMem += u.mem
		out.meanCPU += float64(u.cpu) / float64(a.Cpu().MilliValue())
		out.meanMem += float64(u.mem) / float64(a.Memory().Value())
	}
	if len(nodes) == 0 || allocCPU == 0 {
		return out
	}
	out.meanCPU /= float64(len(nodes))
	out.meanMem /= float64(len(nodes))
	out.cpu = float64(usedCPU) / float64(allocCPU)
	out.mem = float64(usedMem) / float64(allocMem)
	return out
}

// checkUtilization fails the run on a figure under Karpenter's bound,
// read both ways: both must clear it.
func checkUtilization(t *testing.T, phase string, u utilization, cpu, mem float64) {
	t.Helper()
	if cpu > 0 && min(u.cpu, u.meanCPU) <= cpu {
		t.Errorf("%s: reserved CPU %.1f %% (mean per node %.1f %%), Karpenter's threshold > %.0f %%", phase, 100*u.cpu, 100*u.meanCPU, 100*cpu)
	}
	if mem > 0 && min(u.mem, u.meanMem) <= mem {
		t.Errorf("%s: reserved memory %.1f %% (mean per node %.1f %%), Karpenter's threshold > %.0f %%", phase, 100*u.mem, 100*u.meanMem, 100*mem)
	}
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// perfShape is what the run watches each poll: the pods, how many are
// bound and pending, and the pool's nodes and cordoned nodes.
type perfShape struct {
	pods, bound, nodes, cordoned int
	// empty are the pool's nodes running none of the workload's pods.
	empty  int
	census podCensus
}

func (e *env) perfShape(t *testing.T, key types.PoolKey, ns string) (perfShape, []corev1.Pod) {
	t.Helper()
	pods := e.pods(t, ns)
	var s perfShape
	var live []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		live = append(live, p)
		if _, ok := boundAt(&p); ok {
			s.bound++
		}
	}
	s.pods = len(live)
	s.census = census(live)
	used := map[string]bool{}
	for _, p := range live {
		used[p.Spec.NodeName] = true
	}
	for name, n := range e.poolNodes(t, key) {
		s.nodes++
		if n.Spec.Unschedulable || n.DeletionTimestamp != nil {
			s.cordoned++
		}
		if !used[name] {
			s.empty++
		}
	}
	return s, live
}

// runPerf runs one workload of Karpenter's suite against one pool on its
// own kwok cluster: scale-out, then the scale-in and consolidation, each
// reported and held to Karpenter's thresholds.
func runPerf(t *testing.T, pc perfCase) {
	if os.Getenv(perfEnv) != "1" {
		t.Skipf("set %s=1 (make bench-perf does) to run Karpenter's performance workloads", perfEnv)
	}
	catalog := "kwok.Catalog()"
	if pc.catalog != nil {
		catalog = "kwok.Catalog() with kwok-16c64g and kwok-16c128g"
	} else if os.Getenv(perfCatalogEnv) == "wide" {
		pc.catalog, catalog = wideCatalog(), "kwok.Catalog() with kwok-16c64g and kwok-16c128g ("+perfCatalogEnv+"=wide)"
	}
	c := kubeapi.Shared(t)
	var observerRequests atomic.Int64
	connector := rest.CopyConfig(c.ConnectorConfig)
	connector.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &observerRequests} })
	cluster, release, err := devfleet.KwokCluster(pc.id, c.AdminConfig, connector,
		kwok.Config{BootDelay: types.Duration(bootDelay), Region: region, Catalog: pc.catalog}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := ctxFor(10 * time.Second)
		defer cancel()
		_ = release(ctx)
	})
	spec := starter.SpecFile{Clusters: []contract.ClusterDeclared{{ID: pc.id, Provider: kwok.ProviderName, Phase: contract.PhaseActive, Region: region, SampleInterval: types.Duration(time.Second)}}}
	stack := testsuite.StartStackOn(t, spec, "", workers.StaticClusters{pc.id: cluster})
	e := &env{cluster: c, admin: k8s.NewForConfigOrDie(c.AdminConfig), stack: stack}

	key := types.PoolKey{Org: org, Project: project, Service: pc.id, Provider: kwok.ProviderName, Cluster: pc.id}
	ns := pc.id
	e.applyPool(t, key, perfPolicy())
	e.createNamespace(t, ns)
	evicted, stop := e.evictions(t, ns)
	t.Cleanup(stop)

	want := 0
	for _, d := range pc.deployments {
		want += int(d.replicas)
	}
	t.Logf("%s: %d deployments, %d pods, catalog %s; load average %s", pc.id, len(pc.deployments), want, catalog, loadAverage())
	started := time.Now()
	for _, d := range pc.deployments {
		// Karpenter's deployments have no PodDisruptionBudget.
		rs := d.replicaSet(ns, key.Service)
		for k, v := range d.annotations {
			if rs.Spec.Template.Annotations == nil {
				rs.Spec.Template.Annotations = map[string]string{}
			}
			rs.Spec.Template.Annotations[k] = v
		}
		ctx, cancel := ctxFor(10 * time.Second)
		_, err := e.admin.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Scale-out: every pod bound.
	lastLog := time.Now()
	var shape perfShape
	ok, _ := poll(pc.limits.scaleOut+5*time.Minute, 5*time.Second, func() (bool, string) {
		shape, _ = e.perfShape(t, key, ns)
		if time.Since(lastLog) >= time.Minute {
			lastLog = time.Now()
			t.Logf("%s: %d of %d pods bound, %d nodes; %s; load %s", time.Since(started).Round(time.Second), shape.bound, want, shape.nodes, shape.census, loadAverage())
			e.perfDump(t, key)
		}
		return shape.bound == want && shape.pods == want, ""
	})
	if !ok {
		e.perfDump(t, key)
		t.Fatalf("scale-out: %d of %d pods bound %s after the first (%s); Karpenter's threshold %s", shape.bound, want, time.Since(started).Round(time.Second), shape.census, pc.limits.scaleOut)
	}
	// The last bind, from the pods' PodScheduled conditions (whole
	// seconds), not when the 5 s poll saw it.
	scaleOut := time.Since(started)
	_, bound := e.perfShape(t, key, ns)
	var lastBind time.Time
	for i := range bound {
		if at, ok := boundAt(&bound[i]); ok && at.After(lastBind) {
			lastBind = at
		}
	}
	if d := lastBind.Sub(started.Truncate(time.Second)); d > 0 && d < scaleOut {
		scaleOut = d
	}
	load := loadAverage()
	outUse := e.utilization(t, key)
	outNodes := len(e.poolNodes(t, key))
	outEvicted := evicted()
	sizes := nodeSizes(e.poolNodes(t, key))
	t.Logf("SCALE-OUT %s: %d pods bound %s after the first was created (Karpenter's threshold %s); %d nodes (%s); reserved %s; %d pods evicted; observer %d requests; load average %s",
		pc.id, want, scaleOut.Round(time.Second), pc.limits.scaleOut, outNodes, sizes, outUse, outEvicted, observerRequests.Load(), load)
	if scaleOut >= pc.limits.scaleOut {
		t.Errorf("scale-out: all %d pods bound after %s, Karpenter's threshold < %s", want, scaleOut.Round(time.Second), pc.limits.scaleOut)
	}
	checkUtilization(t, "scale-out", outUse, pc.limits.scaleOutCPU, pc.limits.scaleOutMemory)
	_, pods := e.perfShape(t, key, ns)
	t.Logf("scale-out nodes by the pods they run: %s", nodeMix(e.poolNodes(t, key), pods))

	// The nodes holding protected pods before the scale-in, and those pods.
	protectedNodes, protectedPods := map[string]bool{}, map[string]bool{}
	for _, p := range pods {
		if p.Annotations[kubernetes.AnnotationDoNotDisrupt] == "true" {
			protectedNodes[p.Spec.NodeName] = true
			protectedPods[p.Name] = true
		}
	}

	// Consolidation: the scale-in, then nothing changing for perfQuiet.
	after := 0
	for _, d := range pc.deployments {
		after += int(d.scaleIn)
	}
	scaledIn := time.Now()
	for _, d := range pc.deployments {
		if d.scaleIn != d.replicas {
			e.scale(t, ns, d.name, d.scaleIn)
		}
	}
	lastChange, last := time.Now(), perfShape{}
	minNodes := outNodes
	lastLog = time.Now()
	wait := pc.limits.consolidation + perfQuiet
	if d, err := time.ParseDuration(os.Getenv(perfWaitEnv)); err == nil && d > 0 && d < wait {
		wait = d
		t.Logf("consolidation: waiting at most %s (%s), not Karpenter's %s", wait, perfWaitEnv, pc.limits.consolidation)
	}
	settled, _ := poll(wait, 5*time.Second, func() (bool, string) {
		s, _ := e.perfShape(t, key, ns)
		minNodes = min(minNodes, s.nodes)
		// Settled: the pods are the scale-in's, all bound, no node is
		// empty, and neither the nodes nor the cordoned ones have changed
		// for perfQuiet. Karpenter's suite asks only the last; a pool that
		// stops with empty nodes has not settled, it has stalled.
		if s.nodes != last.nodes || s.cordoned != last.cordoned || s.pods != last.pods || s.bound != last.bound || s.empty != last.empty {
			lastChange, last = time.Now(), s
		}
		if time.Since(lastLog) >= time.Minute {
			lastLog = time.Now()
			t.Logf("consolidation %s: %d pods (%d bound), %d nodes (%d cordoned, %d empty), %d evicted; %s; load %s",
				time.Since(scaledIn).Round(time.Second), s.pods, s.bound, s.nodes, s.cordoned, s.empty, evicted()-outEvicted, s.census, loadAverage())
			e.perfDump(t, key)
		}
		return s.pods == after && s.bound == after && s.cordoned == 0 && s.empty == 0 && time.Since(lastChange) >= perfQuiet, ""
	})
	consolidation := lastChange.Sub(scaledIn)
	load = loadAverage()
	afterUse := e.utilization(t, key)
	afterNodes := len(e.poolNodes(t, key))
	final, live := e.perfShape(t, key, ns)
	disrupted := evicted() - outEvicted
	// The scale-in only deletes pods: a pod created after it replaces one
	// a drain took, whether or not the eviction watch saw it go.
	replaced := 0
	for _, p := range live {
		if p.CreationTimestamp.After(scaledIn.Add(time.Second)) {
			replaced++
		}
	}
	st, stErr := e.perfStatus(key)
	t.Logf("CONSOLIDATION %s: settled %s after the scale-in to %d pods (%s with Karpenter's %s of quiet; its threshold %s); nodes %d → %d (%s), fewest %d; reserved %s; %d pods disrupted (evicted), %d pods recreated after the scale-in; load average %s",
		pc.id, consolidation.Round(time.Second), after, (consolidation + perfQuiet).Round(time.Second), perfQuiet, pc.limits.consolidation,
		outNodes, afterNodes, nodeSizes(e.poolNodes(t, key)), minNodes, afterUse, disrupted, replaced, load)
	if stErr != nil {
		t.Logf("pool status after consolidation: %v", stErr)
	} else {
		logDecisions(t, st)
	}
	_, pods = e.perfShape(t, key, ns)
	t.Logf("consolidated nodes by the pods they run: %s", nodeMix(e.poolNodes(t, key), pods))
	if !settled {
		e.perfDump(t, key)
		t.Errorf("consolidation: not settled within %s (last change %s after the scale-in; Karpenter's threshold %s)", wait, consolidation.Round(time.Second), pc.limits.consolidation)
	} else if consolidation+perfQuiet >= pc.limits.consolidation {
		t.Errorf("consolidation: settled after %s (with %s of quiet), Karpenter's threshold < %s", consolidation.Round(time.Second), perfQuiet, pc.limits.consolidation)
	}
	if final.empty > 0 {
		t.Errorf("consolidation: %d of the pool's %d nodes run none of the workload's pods at the end", final.empty, afterNodes)
	}
	if afterNodes >= outNodes {
		t.Errorf("consolidation: %d nodes before the scale-in and %d after: none removed", outNodes, afterNodes)
	}
	checkUtilization(t, "consolidation", afterUse, pc.limits.afterCPU, pc.limits.afterMemory)

	if len(protectedPods) > 0 {
		nodes := e.poolNodes(t, key)
		still := 0
		for n := range protectedNodes {
			if _, ok := nodes[n]; ok {
				still++
			}
		}
		_, pods := e.perfShape(t, key, ns)
		kept := 0
		for _, p := range pods {
			if protectedPods[p.Name] {
				kept++
			}
		}
		t.Logf("do-not-disrupt: %d of %d nodes that held a protected pod remain; %d of %d protected pods untouched", still, len(protectedNodes), kept, len(protectedPods))
		if still == 0 {
			t.Errorf("no node that held a do-not-disrupt pod remains (Karpenter's check: at least one)")
		}
		if kept != len(protectedPods) {
			t.Errorf("%d of %d do-not-disrupt pods were replaced: none may be", len(protectedPods)-kept, len(protectedPods))
		}
	}
}

// nodeSizes counts the nodes by size ("120×kwok-8c32g, 3×kwok-4c8g").
func nodeSizes(nodes map[string]corev1.Node) string {
	count := map[string]int{}
	for _, n := range nodes {
		count[n.Labels[corev1.LabelInstanceTypeStable]]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%d×%s", count[k], k))
	}
	return strings.Join(parts, ", ")
}

// perfStatus is the pool's status query with a minute to answer: a pool
// busy with hundreds of nodes on a loaded machine may be slow to, and
// that is a finding to log, not a reason to stop the run.
func (e *env) perfStatus(key types.PoolKey) (contract.PoolStatus, error) {
	ctx, cancel := ctxFor(time.Minute)
	defer cancel()
	return starter.PoolStatus(ctx, e.stack.Client, key)
}

// perfDump logs what the pool believes and the nodes it has cordoned.
func (e *env) perfDump(t *testing.T, key types.PoolKey) {
	t.Helper()
	asked := time.Now()
	st, err := e.perfStatus(key)
	if err != nil {
		t.Logf("pool %s: status query failed after %s: %v", key.Service, time.Since(asked).Round(time.Millisecond), err)
	} else {
		t.Logf("pool %s (status answered in %s): state=%s nodes=%d target=%d pending=%d inFlight=%d noHelp=%d addedWithoutProgress=%d deferred=%d blocked=%q",
			key.Service, time.Since(asked).Round(time.Millisecond), st.State, st.Nodes, st.TargetNodes, st.PendingPods, st.InFlight, len(st.NoHelp), st.AddedWithoutProgress, st.Deferred, st.Blocked)
		from := max(0, len(st.Decisions)-3)
		for _, d := range st.Decisions[from:] {
			t.Logf("  decision #%d %s %s +%d -%d: %.160s (%s)", d.Seq, d.At.Format(time.TimeOnly), d.Action, d.Added, len(d.Removed), d.Reason, d.Outcome)
		}
	}
	for name, n := range e.poolNodes(t, key) {
		if n.Spec.Unschedulable || n.DeletionTimestamp != nil {
			var taints []string
			for _, tn := range n.Spec.Taints {
				taints = append(taints, tn.Key)
			}
			t.Logf("  cordoned %s (created %s, deleting %v, taints %v)", name, n.CreationTimestamp.Format(time.TimeOnly), n.DeletionTimestamp != nil, taints)
		}
	}
}

// nodeMix counts the pool's nodes by the pods they run, by deployment
// ("450× large-resource-app 1 + small-resource-app 1"): where packing went.
func nodeMix(nodes map[string]corev1.Node, pods []corev1.Pod) string {
	apps := map[string]map[string]int{}
	for _, p := range pods {
		if _, ok := nodes[p.Spec.NodeName]; !ok {
			continue
		}
		if apps[p.Spec.NodeName] == nil {
			apps[p.Spec.NodeName] = map[string]int{}
		}
		apps[p.Spec.NodeName][p.Labels["app"]]++
	}
	count := map[string]int{}
	for name := range nodes {
		var parts []string
		for _, app := range slices.Sorted(maps.Keys(apps[name])) {
			parts = append(parts, fmt.Sprintf("%s %d", app, apps[name][app]))
		}
		mix := strings.Join(parts, " + ")
		if mix == "" {
			mix = "empty"
		}
		count[mix]++
	}
	keys := slices.Sorted(maps.Keys(count))
	slices.SortStableFunc(keys, func(a, b string) int { return count[b] - count[a] })
	var out []string
	for i, k := range keys {
		if i == 6 {
			out = append(out, fmt.Sprintf("%d other mixes", len(keys)-i))
			break
		}
		out = append(out, fmt.Sprintf("%d× %s", count[k], k))
	}
	return strings.Join(out, "; ")
}

// logDecisions summarizes the pool's decisions by action, with the last
// few in full.
func logDecisions(t *testing.T, st contract.PoolStatus) {
	t.Helper()
	byAction := map[string]int{}
	for _, d := range st.Decisions {
		byAction[d.Action]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(byAction)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, byAction[k]))
	}
	t.Logf("pool decisions (the %d the status keeps): %s; state %s, blocked %q", len(st.Decisions), strings.Join(parts, ", "), st.State, st.Blocked)
	from := max(0, len(st.Decisions)-5)
	for _, d := range st.Decisions[from:] {
		t.Logf("  decision #%d %s %s +%d -%d: %.200s (%s)", d.Seq, d.At.Format(time.TimeOnly), d.Action, d.Added, len(d.Removed), d.Reason, d.Outcome)
	}
}
