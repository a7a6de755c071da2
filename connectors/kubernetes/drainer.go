package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// DrainerConfig tunes a Drainer; the zero value is ready to use.
type DrainerConfig struct {
	// Now is the clock the drain deadline is checked against; nil means time.Now.
	Now func() time.Time
	// BudgetPatience is how long every pod left may be refused by its
	// PodDisruptionBudget, nothing evicted and nothing terminating, before
	// the drain stops and says so; zero means DefaultBudgetPatience.
	BudgetPatience time.Duration
}

// DefaultEvictionRetry is the pause between rounds when DrainOptions leaves
// EvictionRetry unset.
const DefaultEvictionRetry = 5 * time.Second

// DefaultBudgetPatience: a PodDisruptionBudget that allows no disruption
// would otherwise hold the drain, and the pool waiting on it, until the
// deadline (10m by default) with nothing to show; under a sample interval
// the drain stops, names the pods and their budgets, and the pool tries
// again later.
const DefaultBudgetPatience = 15 * time.Second

var (
	// ErrDrainDeadline: the node was not empty by DrainOptions.Deadline; the
	// drain uncordoned the node it had cordoned. Wrapped in a Permanent error.
	ErrDrainDeadline = errors.New("drain deadline passed")
	// ErrDrainRefused: a pod on the node must not be evicted (marked
	// safe-to-evict=false or do-not-disrupt=true, or unreplicated).
	// Wrapped in a Permanent error.
	ErrDrainRefused = errors.New("drain refused")
)

// Drainer empties nodes through the Eviction API.
type Drainer struct {
	client k8s.Interface
	cfg    DrainerConfig
}

var _ connectors.Drainer = (*Drainer)(nil)

// NewDrainer returns a Drainer for the cluster behind client.
func NewDrainer(client k8s.Interface, cfg DrainerConfig) *Drainer {
	return &Drainer{client: client, cfg: cfg}
}

// Drain cordons the node and evicts its pods, honouring
// PodDisruptionBudgets, until only DaemonSet and mirror pods are left.
//
// It refuses, changing nothing, when a pod must not be evicted. Past the
// deadline it uncordons the node (if the cordon is its own) and returns
// ErrDrainDeadline naming the pods that stayed. Every step is idempotent,
// so calling Drain again after a crash or a cancelled context finishes the
// job: a cancelled drain leaves the node cordoned for that resumption.
func (d *Drainer) Drain(ctx context.Context, node string, opts connectors.DrainOptions) (connectors.DrainResult, error) {
	res := connectors.DrainResult{Node: node}
	if err := validateDrain(node, opts); err != nil {
		return res, err
	}
	retry := opts.EvictionRetry
	if retry <= 0 {
		retry = DefaultEvictionRetry
	}
	n, err := d.getNode(ctx, node)
	if err != nil {
		return res, err
	}
	owned, cordoned := ownsCordon(n), false
	evicted := map[apitypes.UID]bool{}
	var budgetHeld time.Time // since when budgets refused every pod left
	for {
		if err := d.stopped(ctx, node); err != nil {
			return res, err
		}
		pods, err := podsOnNode(ctx, d.client, node)
		if err != nil {
			return res, err
		}
		plan := planDrain(pods, evicted)
		res.Skipped = plan.skipped
		if len(plan.blockers) > 0 {
			return res, d.refuse(ctx, node, owned, plan.blockers)
		}
		if len(plan.remaining) > 0 && d.pastDeadline(opts) {
			return res, d.giveUp(ctx, node, owned, plan.remaining)
		}
		if !cordoned {
			if owned, err = d.cordon(ctx, n); err != nil {
				return res, err
			}
			cordoned = true
			d.report(opts, res, plan.remaining)
			// List again: a pod bound between the first list and the
			// cordon must be seen before calling the node empty.
			continue
		}
		if len(plan.remaining) == 0 {
			return res, nil
		}
		wait := retry
		refused := map[string]string{}
		for i := range plan.toEvict {
			pod := &plan.toEvict[i]
			if err := d.stopped(ctx, node); err != nil {
				return res, err
			}
			if d.pastDeadline(opts) {
				break
			}
			gone, err := d.evictBefore(ctx, pod, opts)
			if errclass.Of(err) == errclass.RateLimited {
				// A PodDisruptionBudget (or API throttling) says not now:
				// the next round tries again.
				wait = max(wait, errclass.RetryAfterOf(err))
				if why := budgetRefusal(err); why != "" {
					refused[podKey(pod)] = why
				}
				continue
			}
			if err != nil {
				return res, d.abandon(ctx, node, owned, err)
			}
			evicted[pod.UID] = true
			if !gone {
				res.Evicted = append(res.Evicted, podKey(pod))
			}
			d.report(opts, res, plan.remaining)
		}
		switch {
		case len(refused) == 0 || len(refused) != len(plan.remaining):
			budgetHeld = time.Time{}
		case budgetHeld.IsZero():
			budgetHeld = d.now()
		}
		if !budgetHeld.IsZero() && d.now().Sub(budgetHeld) >= cmp.Or(d.cfg.BudgetPatience, DefaultBudgetPatience) {
			var blockers []string
			for _, pod := range slices.Sorted(maps.Keys(refused)) {
				blockers = append(blockers, pod+": "+refused[pod])
			}
			return res, d.refuse(ctx, node, owned, blockers)
		}
		// Waiting on a budget or on terminating pods is a step too: the
		// activity keeps heartbeating through it.
		d.report(opts, res, plan.remaining)
		if err := d.sleep(ctx, node, d.untilDeadline(opts, wait)); err != nil {
			return res, err
		}
	}
}

// drainPlan sorts a node's pods by what the drain does with them.
type drainPlan struct {
	skipped   []string     // DaemonSet and mirror pods: they go with the node
	blockers  []string     // "ns/name: reason" for pods that must not be evicted
	toEvict   []corev1.Pod // pods to ask the Eviction API about now
	remaining []string     // pods still to leave: toEvict plus those terminating
}

func planDrain(pods []corev1.Pod, evicted map[apitypes.UID]bool) drainPlan {
	var plan drainPlan
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(podKey(&a), podKey(&b)) })
	for i := range pods {
		pod := &pods[i]
		switch {
		case isTerminal(pod):
		case isNodeLocal(pod):
			plan.skipped = append(plan.skipped, podKey(pod))
		case isTerminating(pod) || evicted[pod.UID]:
			plan.remaining = append(plan.remaining, podKey(pod))
		default:
			if reason := evictionBlocker(pod); reason != "" {
				plan.blockers = append(plan.blockers, podKey(pod)+": "+reason)
				continue
			}
			plan.toEvict = append(plan.toEvict, *pod)
			plan.remaining = append(plan.remaining, podKey(pod))
		}
	}
	return plan
}

// refuse undoes a cordon of ours (a resumed drain meeting a new blocker)
// and reports which pods stop the drain.
func (d *Drainer) refuse(ctx context.Context, node string, owned bool, blockers []string) error {
	if owned {
		if err := d.Uncordon(ctx, node); err != nil {
			return err
		}
	}
	return errclass.New(errclass.Permanent, providerName, "drain node "+node,
		fmt.Errorf("%w: %s", ErrDrainRefused, strings.Join(blockers, "; ")))
}

// abandon ends a drain on an eviction error. A retryable one leaves the
// cordon for the retry to resume; a permanent one will not be retried, so
// the node is made schedulable again rather than left cordoned for good.
func (d *Drainer) abandon(ctx context.Context, node string, owned bool, err error) error {
	if owned && errclass.IsPermanent(err) {
		if uerr := d.Uncordon(ctx, node); uerr != nil {
			return fmt.Errorf("%w (and uncordoning %s failed: %v)", err, node, uerr)
		}
	}
	return err
}

// giveUp makes the node schedulable again so it keeps serving, and names
// the pods that would not leave.
func (d *Drainer) giveUp(ctx context.Context, node string, owned bool, remaining []string) error {
	what := "left cordoned by someone else"
	if owned {
		if err := d.Uncordon(ctx, node); err != nil {
			return err
		}
		what = "uncordoned"
	}
	return errclass.New(errclass.Permanent, providerName, "drain node "+node,
		fmt.Errorf("%w: pods still on the node: %s; node %s", ErrDrainDeadline, strings.Join(remaining, ", "), what))
}

func (d *Drainer) report(opts connectors.DrainOptions, res connectors.DrainResult, remaining []string) {
	if opts.Progress == nil {
		return
	}
	opts.Progress(connectors.DrainProgress{
		Node:      res.Node,
		Cordoned:  true,
		Evicted:   slices.Clone(res.Evicted),
		Remaining: slices.Clone(remaining),
	})
}

// stopped reports a cancelled context as soon as it is seen, without
// touching the node: the caller resumes the drain later.
func (d *Drainer) stopped(ctx context.Context, node string) error {
	if err := ctx.Err(); err != nil {
		return errclass.New(errclass.Retryable, providerName, "drain node "+node, err)
	}
	return nil
}

func (d *Drainer) sleep(ctx context.Context, node string, wait time.Duration) error {
	if wait <= 0 {
		return d.stopped(ctx, node)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return d.stopped(ctx, node)
	case <-t.C:
		return nil
	}
}

func (d *Drainer) now() time.Time {
	if d.cfg.Now != nil {
		return d.cfg.Now()
	}
	return time.Now()
}

func (d *Drainer) pastDeadline(opts connectors.DrainOptions) bool {
	return !d.now().Before(opts.Deadline)
}

// untilDeadline shortens a wait so the deadline is noticed when it comes.
func (d *Drainer) untilDeadline(opts connectors.DrainOptions, wait time.Duration) time.Duration {
	return min(wait, opts.Deadline.Sub(d.now()))
}

func validateDrain(node string, opts connectors.DrainOptions) error {
	if err := validateNodeName(node); err != nil {
		return err
	}
	if opts.Deadline.IsZero() {
		return errclass.New(errclass.Permanent, providerName, "drain node "+node,
			errors.New("DrainOptions.Deadline is not set; a drain must know when to give up"))
	}
	return nil
}

func validateNodeName(node string) error {
	if problems := validation.IsDNS1123Subdomain(node); len(problems) > 0 {
		return errclass.New(errclass.Permanent, providerName, "node "+fmt.Sprintf("%q", node),
			fmt.Errorf("not a valid node name: %s", strings.Join(problems, "; ")))
	}
	return nil
}

// budgetRefusal names the PodDisruptionBudget rule behind an eviction the
// API server refused for it (429, "would violate the pod's disruption
// budget"), or "" for any other refusal.
func budgetRefusal(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsTooManyRequests(err) {
		return ""
	}
	st := status.Status()
	if !strings.Contains(st.Message, "disruption budget") {
		return ""
	}
	why := "its PodDisruptionBudget allows no disruption now"
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type == policyv1.DisruptionBudgetCause && c.Message != "" {
				why += " (" + c.Message + ")"
				break
			}
		}
	}
	return why
}
