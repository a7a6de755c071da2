package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/types"
)

// The SIG-autoscaling CapacityBuffer API (autoscaling.x-k8s.io), as
// cluster-autoscaler 1.35 serves it: its CRD serves v1alpha1 and v1beta1
// (v1beta1 stored) with one schema, and CA reads v1beta1. The observer
// reads the first of BufferVersions the cluster serves.
const (
	BufferGroup    = "autoscaling.x-k8s.io"
	BufferResource = "capacitybuffers"
	// ActiveCapacity is the provisioning strategy the pools serve (the
	// API's default); a buffer of another strategy is some other
	// controller's, and the observer neither reads nor writes it.
	ActiveCapacity = "buffer.x-k8s.io/active-capacity"
	// ConditionReadyForProvisioning is the status condition the observer
	// writes, as CA's buffer controller does: True when the buffer was
	// turned into pods of one shape for a pool, False with the reason.
	ConditionReadyForProvisioning = "ReadyForProvisioning"
	reasonBufferReady             = "AttributesSetSuccessfully"
	reasonBufferInvalid           = "InvalidBuffer"

	// bufferRediscover is how long a cluster without the API waits before
	// discovery asks again (the CRD may be installed later).
	bufferRediscover = 5 * time.Minute
	// statusPause is how long status writes stop after one was forbidden
	// (a watcher whose role grants no update on capacitybuffers/status).
	statusPause = 10 * time.Minute
	// maxClusterBuffers bounds the buffers read per sample (one page).
	maxClusterBuffers = 500
	maxBufferMessage  = 1024
)

// BufferVersions are the served versions the observer reads, preferred
// first.
var BufferVersions = []string{"v1beta1", "v1alpha1"}

// capacityBuffer is the part of a CapacityBuffer the observer reads and
// writes. Counts are int64 so that a value an unvalidated CRD let through
// is seen as it is rather than failing the decode.
type capacityBuffer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ProvisioningStrategy *string                                   `json:"provisioningStrategy,omitempty"`
		PodTemplateRef       *localRef                                 `json:"podTemplateRef,omitempty"`
		ScalableRef          *scalableRef                              `json:"scalableRef,omitempty"`
		Replicas             *int64                                    `json:"replicas,omitempty"`
		Percentage           *int64                                    `json:"percentage,omitempty"`
		Limits               map[corev1.ResourceName]resource.Quantity `json:"limits,omitempty"`
	} `json:"spec"`
	Status bufferStatus `json:"status"`
}

type localRef struct {
	Name string `json:"name"`
}

type scalableRef struct {
	APIGroup string `json:"apiGroup,omitempty"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

type bufferStatus struct {
	PodTemplateRef        *localRef          `json:"podTemplateRef,omitempty"`
	Replicas              *int32             `json:"replicas,omitempty"`
	PodTemplateGeneration *int64             `json:"podTemplateGeneration,omitempty"`
	Conditions            []metav1.Condition `json:"conditions,omitempty"`
	ProvisioningStrategy  *string            `json:"provisioningStrategy,omitempty"`
}

// bufferReader reads a cluster's CapacityBuffers at each sample, resolves
// each to pods of one shape for one pool, and writes the outcome to the
// buffer's status. A cluster without the API costs one discovery call
// per bufferRediscover; nothing it does fails an observation.
type bufferReader struct {
	core     k8s.Interface
	dyn      dynamic.Interface
	provider string
	cluster  string
	now      func() time.Time

	mu          sync.Mutex
	gvr         schema.GroupVersionResource // empty until discovery finds the API
	discoverAt  time.Time                   // when to ask discovery next
	statusUntil time.Time                   // status writes paused until then
	lastErr     error                       // the latest failure (Observer.BufferError)
	reads       map[string]templateRead     // templates and workloads read, by reference
}

// resolvedBuffer is one buffer as a pool sees it; ok is false when no
// pool can be named for it (the error is only in its status then).
type resolvedBuffer struct {
	key types.PoolKey
	ok  bool
	obs types.BufferObservation
}

// read lists the buffers and resolves them; nil when the API is not
// served or the list fails (the next sample tries again).
func (r *bufferReader) read(ctx context.Context) []resolvedBuffer {
	gvr, ok := r.discover()
	if !ok {
		return nil
	}
	list, err := r.dyn.Resource(gvr).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: maxClusterBuffers})
	if err != nil {
		r.failed(classifyError("list "+BufferResource+"."+BufferGroup, err))
		if apierrors.IsNotFound(err) {
			r.forget() // the CRD was removed: discover again later
		}
		return nil
	}
	items := list.Items
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int {
		return cmp.Or(strings.Compare(a.GetNamespace(), b.GetNamespace()), strings.Compare(a.GetName(), b.GetName()))
	})
	var out []resolvedBuffer
	reads := &sampleReads{used: map[string]bool{}}
	defer r.forgetUnused(reads)
	for i := range items {
		u := &items[i]
		var cb capacityBuffer
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cb); err != nil {
			out = append(out, resolvedBuffer{obs: types.BufferObservation{Namespace: u.GetNamespace(), Name: u.GetName(),
				Error: fmt.Sprintf("cannot read the buffer: %v", err)}})
			continue
		}
		if s := cb.Spec.ProvisioningStrategy; s != nil && *s != "" && *s != ActiveCapacity {
			continue
		}
		got, ok := r.templateOf(ctx, &cb, reads)
		if !ok {
			continue // a new reference past this sample's reads: the next sample reads it
		}
		rb, st := r.resolve(&cb, got)
		out = append(out, rb)
		r.writeStatus(ctx, gvr, u, &cb, st)
	}
	return out
}

// discover finds the served version of the API, asking discovery at most
// once per bufferRediscover while it is absent.
func (r *bufferReader) discover() (schema.GroupVersionResource, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gvr.Resource != "" {
		return r.gvr, true
	}
	now := r.now()
	if now.Before(r.discoverAt) {
		return schema.GroupVersionResource{}, false
	}
	r.discoverAt = now.Add(bufferRediscover)
	for _, v := range BufferVersions {
		list, err := r.core.Discovery().ServerResourcesForGroupVersion(BufferGroup + "/" + v)
		if err != nil || list == nil {
			continue // not served (404), or discovery failed: ask later
		}
		for _, res := range list.APIResources {
			if res.Name == BufferResource {
				r.gvr = schema.GroupVersionResource{Group: BufferGroup, Version: v, Resource: BufferResource}
				return r.gvr, true
			}
		}
	}
	return schema.GroupVersionResource{}, false
}

func (r *bufferReader) forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gvr = schema.GroupVersionResource{}
	r.discoverAt = r.now().Add(bufferRediscover)
}

func (r *bufferReader) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr = err
}

// resolve turns a buffer into a pool's pods, and says what its status
// should read.
func (r *bufferReader) resolve(cb *capacityBuffer, got templateRead) (resolvedBuffer, bufferStatus) {
	rb := resolvedBuffer{obs: types.BufferObservation{Namespace: cb.Namespace, Name: cb.Name}}
	st := bufferStatus{ProvisioningStrategy: ptr(ActiveCapacity), Conditions: slices.Clone(cb.Status.Conditions)}
	fail := func(err error) (resolvedBuffer, bufferStatus) {
		rb.obs.Error = truncateMessage(err.Error())
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionReadyForProvisioning, Status: metav1.ConditionFalse,
			Reason: reasonBufferInvalid, Message: rb.obs.Error, ObservedGeneration: cb.Generation})
		return rb, st
	}
	tmpl, scalable, err := got.tmpl, got.scalable, got.err
	if err != nil {
		return fail(err)
	}
	if cb.Spec.PodTemplateRef != nil {
		st.PodTemplateRef, st.PodTemplateGeneration = &localRef{Name: cb.Spec.PodTemplateRef.Name}, ptr(tmpl.generation)
	}
	// The pool is the one the template's pods would belong to, by their
	// tenant labels as every pending pod is attributed; from here on an
	// error is the pool's to show too.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: cb.Namespace, Labels: tmpl.spec.Labels}, Spec: tmpl.spec.Spec}
	key, ok := podPoolKey(pod.Labels, r.provider, r.cluster)
	if !ok {
		return fail(fmt.Errorf("the pod template's labels name no pool: %s, %s and %s must each be a DNS label",
			types.LabelOrg, types.LabelProject, types.LabelService))
	}
	rb.key, rb.ok = key, true
	count, cut, err := bufferCount(cb, &tmpl.spec, scalable)
	if err != nil {
		return fail(err)
	}
	rb.obs.Pods, rb.obs.Error = count, cut
	rb.obs.Requests, rb.obs.GPUModel, rb.obs.Scheduling = PodRequests(pod), gpuModel(pod), podScheduling(pod)
	st.Replicas = ptr(int32(count))
	msg := fmt.Sprintf("%d pods of %s, headroom of pool %s", count, rb.obs.Requests, key.WorkflowID())
	if cut != "" {
		msg += "; " + cut
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionReadyForProvisioning, Status: metav1.ConditionTrue,
		Reason: reasonBufferReady, Message: truncateMessage(msg), ObservedGeneration: cb.Generation})
	return rb, st
}

// templateRead is one read of a buffer's template or workload.
type templateRead struct {
	tmpl     bufferTemplate
	scalable *int64
	err      error
	at       time.Time
}

// Reading a buffer's template or workload is one GET on the client the
// drains use too, so reads are kept for templateTTL and at most
// maxReadsPerSample are made per sample: a cluster of hundreds of
// buffers costs a few requests a second at most, never a burst that
// holds up an eviction.
const (
	templateTTL       = time.Minute
	maxReadsPerSample = 50
)

// sampleReads is what one sample read and used.
type sampleReads struct {
	fresh int
	used  map[string]bool
}

// templateOf is the buffer's template or workload, read again when the
// last read is older than templateTTL and the sample has reads left; ok
// is false for a reference never read that this sample has no read left
// for.
func (r *bufferReader) templateOf(ctx context.Context, cb *capacityBuffer, reads *sampleReads) (templateRead, bool) {
	ref := cb.Namespace + "/" + refKey(cb)
	reads.used[ref] = true
	now := r.now()
	r.mu.Lock()
	cached, seen := r.reads[ref]
	r.mu.Unlock()
	if seen && now.Sub(cached.at) < templateTTL {
		return cached, true
	}
	if reads.fresh >= maxReadsPerSample {
		return cached, seen
	}
	reads.fresh++
	got := templateRead{at: now}
	got.tmpl, got.scalable, got.err = r.template(ctx, cb)
	if got.err != nil && errors.As(got.err, new(apierrors.APIStatus)) && !apierrors.IsNotFound(got.err) {
		// Not the buffer's fault (a verb the role lacks, a server
		// fault): the reader's failure too.
		r.failed(classifyError("read buffer "+cb.Namespace+"/"+cb.Name, got.err))
	}
	r.mu.Lock()
	if r.reads == nil {
		r.reads = map[string]templateRead{}
	}
	r.reads[ref] = got
	r.mu.Unlock()
	return got, true
}

// refKey names what a buffer reads its pods from.
func refKey(cb *capacityBuffer) string {
	var b strings.Builder
	if t := cb.Spec.PodTemplateRef; t != nil {
		b.WriteString("podtemplate:" + t.Name)
	}
	if s := cb.Spec.ScalableRef; s != nil {
		b.WriteString("|" + s.APIGroup + "/" + s.Kind + ":" + s.Name)
	}
	return b.String()
}

// forgetUnused drops the reads no buffer of the sample used.
func (r *bufferReader) forgetUnused(reads *sampleReads) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ref := range r.reads {
		if !reads.used[ref] {
			delete(r.reads, ref)
		}
	}
}

type bufferTemplate struct {
	spec       corev1.PodTemplateSpec
	generation int64
}

// template is the buffer's pod shape: the named PodTemplate in its
// namespace, or the pod template of the scalable workload, whose replicas
// come back too.
func (r *bufferReader) template(ctx context.Context, cb *capacityBuffer) (bufferTemplate, *int64, error) {
	switch tr, sr := cb.Spec.PodTemplateRef, cb.Spec.ScalableRef; {
	case tr != nil && sr != nil:
		return bufferTemplate{}, nil, fmt.Errorf("spec sets both podTemplateRef and scalableRef; set one")
	case tr != nil:
		pt, err := r.core.CoreV1().PodTemplates(cb.Namespace).Get(ctx, tr.Name, metav1.GetOptions{})
		if err != nil {
			return bufferTemplate{}, nil, fmt.Errorf("spec.podTemplateRef: podtemplate %s/%s: %w", cb.Namespace, tr.Name, err)
		}
		return bufferTemplate{spec: pt.Template, generation: pt.Generation}, nil, nil
	case sr != nil:
		spec, replicas, err := r.scalable(ctx, cb.Namespace, *sr)
		if err != nil {
			return bufferTemplate{}, nil, fmt.Errorf("spec.scalableRef: %w", err)
		}
		return bufferTemplate{spec: spec}, replicas, nil
	default:
		return bufferTemplate{}, nil, fmt.Errorf("spec sets neither podTemplateRef nor scalableRef")
	}
}

// scalable reads the pod template and replicas of a Deployment,
// StatefulSet or ReplicaSet (the workloads the pools size for).
func (r *bufferReader) scalable(ctx context.Context, ns string, ref scalableRef) (corev1.PodTemplateSpec, *int64, error) {
	replicas := func(p *int32) *int64 {
		n := int64(1) // the API server's default
		if p != nil {
			n = int64(*p)
		}
		return &n
	}
	if ref.APIGroup != "apps" {
		return corev1.PodTemplateSpec{}, nil, fmt.Errorf("%s %q in API group %q is not supported: use apps Deployment, StatefulSet or ReplicaSet, or a podTemplateRef", ref.Kind, ref.Name, ref.APIGroup)
	}
	apps := r.core.AppsV1()
	switch ref.Kind {
	case "Deployment":
		d, err := apps.Deployments(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return corev1.PodTemplateSpec{}, nil, fmt.Errorf("deployment %s/%s: %w", ns, ref.Name, err)
		}
		return d.Spec.Template, replicas(d.Spec.Replicas), nil
	case "StatefulSet":
		s, err := apps.StatefulSets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return corev1.PodTemplateSpec{}, nil, fmt.Errorf("statefulset %s/%s: %w", ns, ref.Name, err)
		}
		return s.Spec.Template, replicas(s.Spec.Replicas), nil
	case "ReplicaSet":
		s, err := apps.ReplicaSets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return corev1.PodTemplateSpec{}, nil, fmt.Errorf("replicaset %s/%s: %w", ns, ref.Name, err)
		}
		return s.Spec.Template, replicas(s.Spec.Replicas), nil
	}
	return corev1.PodTemplateSpec{}, nil, fmt.Errorf("kind %q is not supported: use Deployment, StatefulSet or ReplicaSet", ref.Kind)
}

// bufferCount is how many pods a buffer keeps room for, as CA 1.35
// counts them: spec.replicas; for a scalable workload spec.percentage of
// its replicas, rounded down, and the smaller of the two when both are
// set; spec.limits caps the count by what the pods request of each
// limited resource, and alone gives it. Above types.MaxBufferPods the
// count is cut, and cut says so.
func bufferCount(cb *capacityBuffer, tmpl *corev1.PodTemplateSpec, scalable *int64) (count int, cut string, err error) {
	s := cb.Spec
	if s.Replicas != nil && *s.Replicas < 0 {
		return 0, "", fmt.Errorf("spec.replicas must be >= 0, got %d", *s.Replicas)
	}
	if s.Percentage != nil && *s.Percentage < 0 {
		return 0, "", fmt.Errorf("spec.percentage must be >= 0, got %d", *s.Percentage)
	}
	var n *int64
	if s.Replicas != nil {
		n = ptr(*s.Replicas)
	}
	if s.Percentage != nil && scalable != nil {
		p := *s.Percentage * max(*scalable, 0) / 100
		if n == nil || p < *n {
			n = &p
		}
	}
	if len(s.Limits) > 0 {
		fit, ok := podsWithin(s.Limits, tmpl)
		if !ok {
			return 0, "", fmt.Errorf("spec.limits: the pod template requests none of the limited resources")
		}
		if n == nil || fit < *n {
			n = &fit
		}
	}
	if n == nil {
		if s.Percentage != nil {
			return 0, "", fmt.Errorf("spec.percentage applies to a scalableRef only; set spec.replicas or spec.limits")
		}
		return 0, "", fmt.Errorf("spec sets none of replicas, percentage and limits")
	}
	if *n > types.MaxBufferPods {
		return types.MaxBufferPods, fmt.Sprintf("asks for %d pods, kept at %d", *n, types.MaxBufferPods), nil
	}
	return int(*n), "", nil
}

// podsWithin is how many pods of the template fit in limits, over the
// limited resources the pod requests; ok is false if it requests none.
func podsWithin(limits map[corev1.ResourceName]resource.Quantity, tmpl *corev1.PodTemplateSpec) (int64, bool) {
	pod := &corev1.Pod{Spec: tmpl.Spec}
	req := PodRequests(pod)
	per := map[corev1.ResourceName]int64{
		corev1.ResourceCPU: req.MilliCPU, corev1.ResourceMemory: req.Memory * 1000,
		ResourceGPU: req.GPUs * 1000, corev1.ResourceEphemeralStorage: req.EphemeralStorage * 1000,
	}
	fit, ok := int64(0), false
	for name, q := range limits {
		need := per[name]
		if need <= 0 {
			continue
		}
		n := q.MilliValue() / need
		if !ok || n < fit {
			fit, ok = n, true
		}
	}
	return max(fit, 0), ok
}

// writeStatus writes st to the buffer's status when it differs from what
// is there (conditions compared without their transition times). A
// conflict or any failure waits for the next sample; a forbidden write
// pauses writes for statusPause.
func (r *bufferReader) writeStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, cb *capacityBuffer, st bufferStatus) {
	if sameStatus(cb.Status, st) {
		return
	}
	r.mu.Lock()
	paused := r.now().Before(r.statusUntil)
	r.mu.Unlock()
	if paused {
		return
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		r.failed(err)
		return
	}
	obj := u.DeepCopy()
	obj.Object["status"] = m
	if _, err := r.dyn.Resource(gvr).Namespace(cb.Namespace).UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
		r.failed(classifyError("update "+cb.Namespace+"/"+cb.Name+" status", err))
		if apierrors.IsForbidden(err) {
			r.mu.Lock()
			r.statusUntil = r.now().Add(statusPause)
			r.mu.Unlock()
		}
	}
}

func sameStatus(a, b bufferStatus) bool {
	strip := func(cs []metav1.Condition) []metav1.Condition {
		out := slices.Clone(cs)
		for i := range out {
			out[i].LastTransitionTime = metav1.Time{}
		}
		return out
	}
	a.Conditions, b.Conditions = strip(a.Conditions), strip(b.Conditions)
	return reflect.DeepEqual(a, b)
}

func truncateMessage(s string) string {
	if len(s) <= maxBufferMessage {
		return s
	}
	n := maxBufferMessage - 3
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

func ptr[T any](v T) *T { return &v }
