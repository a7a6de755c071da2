package kubernetes

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	metricsclientset "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// Config says which cluster an Observer samples and how its pools are named.
type Config struct {
	// Cluster is the cluster ID, the last part of every pool key.
	Cluster string
	// Provider names the provider of pools that pending pods are
	// attributed to (nodes carry theirs in hanzo.ai/pool).
	Provider string
	// Metrics is metrics-server's client; nil means usage is not read.
	Metrics metricsclientset.Interface
	// Usage, when set, is where node usage comes from instead of Metrics
	// (for example PrometheusUsage: the central metrics store).
	Usage UsageSource
	// Now is the clock for ObservedAt; nil means time.Now.
	Now func() time.Time
	// Informers, when true, keeps a watch-fed cache of the pods and pool
	// nodes (started at the first ObserveCluster, stopped by Close) and
	// samples from it instead of listing both at every sample. It needs
	// watch on pods and nodes.
	Informers bool
	// Dynamic, when set, reads the cluster's CapacityBuffers
	// (autoscaling.x-k8s.io) at each sample and writes their status
	// (buffers.go); nil reads none. A cluster that does not serve the API
	// costs one discovery call every few minutes.
	Dynamic dynamic.Interface
}

// Observer samples one cluster's pools with a few list calls.
type Observer struct {
	client k8s.Interface
	cfg    Config

	mu        sync.Mutex
	malformed []string

	cacheOnce sync.Once
	cache     *informerCache // nil unless Config.Informers

	buffers *bufferReader // nil unless Config.Dynamic
}

var _ connectors.Observer = (*Observer)(nil)

// NewObserver returns an Observer of the cluster behind client.
func NewObserver(client k8s.Interface, cfg Config) *Observer {
	o := &Observer{client: client, cfg: cfg}
	if cfg.Dynamic != nil {
		o.buffers = &bufferReader{core: client, dyn: cfg.Dynamic, provider: cfg.Provider, cluster: cfg.Cluster, now: o.now}
	}
	return o
}

// BufferError is the latest failure reading CapacityBuffers, their pod
// templates or workloads, or writing their status, classified as every
// API error is (nil without Config.Dynamic). Such failures never fail an
// observation: the pools keep deciding without the buffers.
func (o *Observer) BufferError() error {
	if o.buffers == nil {
		return nil
	}
	o.buffers.mu.Lock()
	defer o.buffers.mu.Unlock()
	return o.buffers.lastErr
}

// MalformedNodes lists, from the latest ObserveCluster, the nodes skipped
// because their hanzo.ai/pool label does not name a pool, as "node: reason".
func (o *Observer) MalformedNodes() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.malformed)
}

// ObserveCluster lists the pool nodes and every non-terminal pod once, and
// groups them by pool: pending pods the scheduler marked Unschedulable, and
// nodes with their requested (DaemonSet and mirror pods excluded),
// allocatable and, where metrics-server answers, used resources.
func (o *Observer) ObserveCluster(ctx context.Context) (connectors.ClusterObservation, error) {
	if err := o.validate(); err != nil {
		return connectors.ClusterObservation{}, err
	}
	nodes, pods, err := o.objects(ctx)
	if err != nil {
		return connectors.ClusterObservation{}, err
	}
	obs := o.group(nodes, pods, o.nodeUsage(ctx))
	if o.buffers != nil {
		addBuffers(&obs, o.buffers.read(ctx))
	}
	return obs, nil
}

// addBuffers gives each pool the buffers that name it, bounded as the
// pool bounds them; a buffer that names no pool is only in its status.
func addBuffers(obs *connectors.ClusterObservation, buffers []resolvedBuffer) {
	byPool := map[string][]types.BufferObservation{}
	keys := map[string]types.PoolKey{}
	for _, b := range buffers {
		if !b.ok {
			continue
		}
		id := b.key.WorkflowID()
		byPool[id], keys[id] = append(byPool[id], b.obs), b.key
	}
	for id, bs := range byPool {
		p, ok := obs.Pools[id]
		if !ok {
			p = types.PoolObservation{Pool: keys[id], ObservedAt: obs.ObservedAt}
		}
		var dropped int
		p.Buffers, dropped = types.BoundBuffers(bs)
		p.Truncated += dropped
		obs.Pools[id] = p
	}
}

// objects are the pool nodes and non-terminal pods, from the informer
// cache or from one list of each.
func (o *Observer) objects(ctx context.Context) ([]corev1.Node, []corev1.Pod, error) {
	if o.cfg.Informers {
		o.cacheOnce.Do(func() { o.cache = startInformerCache(o.client) })
		return o.cache.objects(ctx)
	}
	nodes, err := listNodes(ctx, o.client, types.LabelPool)
	if err != nil {
		return nil, nil, err
	}
	// One list serves both halves: unbound pods are the demand, bound
	// ones the nodes' requests.
	pods, err := listPods(ctx, o.client, selectorNonTerminal)
	if err != nil {
		return nil, nil, err
	}
	return nodes, pods, nil
}

// Close stops the informers, if any; the Observer must not be used after.
func (o *Observer) Close(context.Context) error {
	o.cacheOnce.Do(func() {}) // no cache may start after Close
	if o.cache != nil {
		o.cache.stop()
	}
	return nil
}

// group sorts nodes and pods into pools, whichever way they were read.
func (o *Observer) group(nodes []corev1.Node, pods []corev1.Pod, usage map[string]types.Resources) connectors.ClusterObservation {

	obs := connectors.ClusterObservation{
		Cluster:    o.cfg.Cluster,
		ObservedAt: o.now(),
		Pools:      map[string]types.PoolObservation{},
	}
	pools := map[string]*types.PoolObservation{}
	pool := func(key types.PoolKey) *types.PoolObservation {
		id := key.WorkflowID()
		if p, ok := pools[id]; ok {
			return p
		}
		p := &types.PoolObservation{Pool: key, ObservedAt: obs.ObservedAt}
		pools[id] = p
		return p
	}

	requested := map[string]types.Resources{}
	var backlog []poolPod         // untried past QueuedFor: pending while the scheduler refuses pods
	var spread *zoneSpreadCounter // built at the first pending pod that spreads over zones
	for i := range pods {
		pod := &pods[i]
		if isTerminal(pod) {
			continue
		}
		if pod.Spec.NodeName != "" {
			if !isNodeLocal(pod) {
				requested[pod.Spec.NodeName] = requested[pod.Spec.NodeName].Add(PodRequests(pod))
			}
			continue
		}
		pending, ok := pendingPod(pod)
		if !ok {
			key, ours := podPoolKey(pod.Labels, o.cfg.Provider, o.cfg.Cluster)
			if queued, long := queuedPod(pod, obs.ObservedAt); long && ours {
				backlog = append(backlog, poolPod{key, queued})
				continue
			}
			if ours && awaitsScheduler(pod) {
				pool(key).Unbound++
			}
			continue
		}
		if pending.Scheduling != nil && len(pending.Scheduling.TopologySpread) > 0 {
			if spread == nil {
				spread = newZoneSpreadCounter(nodes, pods)
			}
			spread.annotate(pod.Namespace, pending.Scheduling)
		}
		key, ok := podPoolKey(pod.Labels, o.cfg.Provider, o.cfg.Cluster)
		if !ok {
			obs.Unattributed = append(obs.Unattributed, pending)
			continue
		}
		p := pool(key)
		p.PendingPods = append(p.PendingPods, pending)
	}

	// The scheduler is working through a backlog for lack of room when it
	// refused some pod of the cluster lately: then untried pods are
	// demand, in every pool (a pool whose pods it has not reached yet
	// would otherwise buy minutes late). Without a recent refusal it may
	// be down, and a node bought would only wait.
	alive := refusedSince(pools, obs.Unattributed, obs.ObservedAt.Add(-SchedulerAliveWithin))
	for _, q := range backlog {
		p := pool(q.key)
		if !alive {
			p.Unbound++
			continue
		}
		p.PendingPods = append(p.PendingPods, q.pod)
		p.Queued++
	}

	room := roomOf(nodes, pods)
	var malformed []string
	for i := range nodes {
		node := &nodes[i]
		key, err := parsePoolLabel(node.Labels[types.LabelPool], o.cfg.Cluster)
		if err != nil {
			malformed = append(malformed, node.Name+": "+err.Error())
			continue
		}
		n := nodeObservation(node, requested[node.Name])
		n.DrainBlockers, n.LargestPod, n.Reserved = room.blockers[node.Name], room.largest[node.Name], room.reserved[node.Name]
		n.PodTolerations = room.tolerations[node.Name]
		if u, ok := usage[node.Name]; ok {
			n.Usage = &u
		}
		p := pool(key)
		p.Nodes = append(p.Nodes, n)
	}
	o.mu.Lock()
	o.malformed = malformed
	o.mu.Unlock()

	for id, p := range pools {
		slices.SortFunc(p.Nodes, func(a, b types.NodeObservation) int { return strings.Compare(a.Name, b.Name) })
		// Bounded whatever is pending: every pod counted by shape, each
		// shape's oldest listed, in key order.
		obs.Pools[id] = p.SummarizePending(types.MaxListedPending, types.MaxPendingShapes)
	}
	sortPending(obs.Unattributed)
	return obs
}

func (o *Observer) validate() error {
	var problems []error
	if err := types.ValidateDNSLabel("Config.Cluster", o.cfg.Cluster); err != nil {
		problems = append(problems, err)
	}
	if err := types.ValidateDNSLabel("Config.Provider", o.cfg.Provider); err != nil {
		problems = append(problems, err)
	}
	if o.client == nil {
		problems = append(problems, errors.New("no Kubernetes client"))
	}
	if len(problems) > 0 {
		return errclass.New(errclass.Permanent, providerName, "observe cluster", errors.Join(problems...))
	}
	return nil
}

func (o *Observer) now() time.Time {
	if o.cfg.Now != nil {
		return o.cfg.Now()
	}
	return time.Now()
}

// nodeUsage reads metrics-server's node metrics. Any failure leaves usage
// unknown rather than failing the observation: metrics-server is optional.
func (o *Observer) nodeUsage(ctx context.Context) map[string]types.Resources {
	if o.cfg.Usage != nil {
		usage, err := o.cfg.Usage.NodeUsage(ctx)
		if err != nil {
			return nil
		}
		return usage
	}
	if o.cfg.Metrics == nil {
		return nil
	}
	list, err := o.cfg.Metrics.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{LabelSelector: types.LabelPool})
	if err != nil {
		return nil
	}
	usage := make(map[string]types.Resources, len(list.Items))
	for _, m := range list.Items {
		usage[m.Name] = resourcesOf(m.Usage)
	}
	return usage
}

type poolPod struct {
	key types.PoolKey
	pod types.PendingPod
}

// SchedulerAliveWithin is how recent a refusal on record (a pending pod's
// TriedAt) shows kube-scheduler at work, so its untried pods are a backlog.
const SchedulerAliveWithin = time.Minute

// refusedSince says whether kube-scheduler recorded a refusal of some
// pending pod after since.
func refusedSince(pools map[string]*types.PoolObservation, unattributed []types.PendingPod, since time.Time) bool {
	for _, p := range pools {
		for _, pod := range p.PendingPods {
			if pod.TriedAt.After(since) {
				return true
			}
		}
	}
	for _, pod := range unattributed {
		if pod.TriedAt.After(since) {
			return true
		}
	}
	return false
}

// QueuedFor is how long a pod waits untried in kube-scheduler's queue
// before it counts as a backlog: the scheduler tries a new pod within
// milliseconds unless thousands are ahead of it.
const QueuedFor = 5 * time.Second

// queuedPod describes a pod kube-scheduler has not tried yet (no
// PodScheduled condition, no nominated node) though it was created
// QueuedFor before now, pending since its creation. Only pods for the
// default scheduler: another scheduler's pods are its own to place.
func queuedPod(pod *corev1.Pod, now time.Time) (types.PendingPod, bool) {
	if pod.Status.NominatedNodeName != "" || now.Sub(pod.CreationTimestamp.Time) < QueuedFor || !awaitsScheduler(pod) {
		return types.PendingPod{}, false
	}
	p := describePending(pod, pod.CreationTimestamp.Time)
	// No try on record since it was created: no node has refused it.
	p.TriedAt = pod.CreationTimestamp.Time
	return p, true
}

// awaitsScheduler says whether an unbound, live pod is the default
// scheduler's to place and not held back by a scheduling gate: one it has
// not tried yet, or has nominated to a node that preemption is emptying.
func awaitsScheduler(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil ||
		len(pod.Spec.SchedulingGates) > 0 ||
		(pod.Spec.SchedulerName != "" && pod.Spec.SchedulerName != corev1.DefaultSchedulerName) {
		return false
	}
	if pod.Status.NominatedNodeName != "" {
		return true
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return false // refused (pendingPod's) or gated
		}
	}
	return true
}

// pendingPod describes a pod the scheduler gave up on for now.
func pendingPod(pod *corev1.Pod) (types.PendingPod, bool) {
	if pod.Status.Phase != corev1.PodPending {
		return types.PendingPod{}, false
	}
	since, ok := unschedulableSince(pod)
	if !ok {
		return types.PendingPod{}, false
	}
	return describePending(pod, since.Time), true
}

// describePending is a pending pod as the pool sees it, pending since since.
func describePending(pod *corev1.Pod, since time.Time) types.PendingPod {
	return types.PendingPod{
		Namespace:          pod.Namespace,
		Name:               pod.Name,
		Org:                pod.Labels[types.LabelOrg],
		Project:            pod.Labels[types.LabelProject],
		Service:            pod.Labels[types.LabelService],
		Requests:           PodRequests(pod),
		GPUModel:           gpuModel(pod),
		Scheduling:         podScheduling(pod),
		UnschedulableSince: since,
		TriedAt:            schedulerTriedAt(pod),
	}
}

func nodeObservation(node *corev1.Node, requested types.Resources) types.NodeObservation {
	size := node.Labels[LabelInstanceType]
	if size == "" {
		size = node.Labels[labelInstanceTypeBeta]
	}
	return types.NodeObservation{
		Name:           node.Name,
		ProviderID:     node.Spec.ProviderID,
		Size:           size,
		State:          nodeState(node),
		CreatedAt:      node.CreationTimestamp.Time,
		Allocatable:    NodeAllocatable(node),
		Requested:      requested,
		Labels:         maps.Clone(node.Labels),
		Taints:         nodeTaints(node),
		ReadyChangedAt: readyChangedAt(node),
	}
}

// readyChangedAt is the Ready condition's last transition (zero if none).
func readyChangedAt(node *corev1.Node) time.Time {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// nodeState: deletion wins over a cordon, a cordon over readiness.
func nodeState(node *corev1.Node) types.NodeState {
	switch {
	case node.DeletionTimestamp != nil:
		return types.NodeDeleting
	case node.Spec.Unschedulable:
		return types.NodeCordoned
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			return types.NodeReady
		}
	}
	return types.NodeNotReady
}

func sortPending(pods []types.PendingPod) {
	slices.SortFunc(pods, func(a, b types.PendingPod) int { return strings.Compare(a.Key(), b.Key()) })
}
