package frontend

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"golang.org/x/time/rate"

	"github.com/hanzoai/visor-fleet/types"
)

// Quota is what one org's tenant callers may ask of the frontend.
type Quota struct {
	MaxPools         int // running pools
	AppliesPerMinute int // starts and updates of its pools
	SignalsPerSecond int // signals to its pools
}

// DefaultQuota binds an org the platform names no quota for: room for a
// large org's apply, and a flood held far below what one shared worker
// serves.
var DefaultQuota = Quota{MaxPools: 2000, AppliesPerMinute: 600, SignalsPerSecond: 50}

// Pools counts an org's running pools, for MaxPools.
type Pools interface {
	// Running reports whether workflowID has a running execution.
	Running(ctx context.Context, namespace, workflowID string) (bool, error)
	// RunningPools counts org's running pool workflows.
	RunningPools(ctx context.Context, namespace, org string) (int, error)
}

// Quotas holds every org's quota and what it has spent. One per frontend:
// the rates are per frontend instance (a cluster of n frontends lets an
// org n times the rate), the pool count is the server's.
type Quotas struct {
	limits map[string]types.OrgPolicy
	def    Quota
	pools  Pools

	mu      sync.Mutex
	applies map[string]*rate.Limiter
	signals map[string]*rate.Limiter
}

// NewQuotas binds each org to limits[org]'s quotas (the platform's
// clusters file, orgs:), def where it sets none.
func NewQuotas(limits map[string]types.OrgPolicy, def Quota, pools Pools) *Quotas {
	return &Quotas{limits: limits, def: def, pools: pools, applies: map[string]*rate.Limiter{}, signals: map[string]*rate.Limiter{}}
}

// quota is org's quota, the default filling what the platform left 0.
func (q *Quotas) quota(org string) Quota {
	out := q.def
	if l, ok := q.limits[org]; ok {
		if l.MaxPools > 0 {
			out.MaxPools = l.MaxPools
		}
		if l.AppliesPerMinute > 0 {
			out.AppliesPerMinute = l.AppliesPerMinute
		}
		if l.SignalsPerSecond > 0 {
			out.SignalsPerSecond = l.SignalsPerSecond
		}
	}
	return out
}

func (q *Quotas) limiter(m map[string]*rate.Limiter, org string, every time.Duration, n int) *rate.Limiter {
	q.mu.Lock()
	defer q.mu.Unlock()
	l, ok := m[org]
	if !ok {
		l = rate.NewLimiter(rate.Every(every/time.Duration(n)), n)
		m[org] = l
	}
	return l
}

// Admit charges a tenant's call (already allowed by TenantMay) to the org
// of the pool it names and refuses it past that org's quota, so one org's
// flood waits at the frontend instead of in the shared workers' queues.
func (q *Quotas) Admit(ctx context.Context, method string, req any) error {
	name := methodName(method)
	refuse := func(org, why string) error {
		return fmt.Errorf("%s: org %s %s (the platform's quota; retry later or ask for more)", name, org, why)
	}
	// charge takes one from the org's bucket of calls of one kind.
	charge := func(id string, buckets map[string]*rate.Limiter, per time.Duration, limit func(Quota) int, what string) error {
		org, ok := poolOrg(id)
		if !ok {
			return nil
		}
		if n := limit(q.quota(org)); n > 0 && !q.limiter(buckets, org, per, n).Allow() {
			return refuse(org, fmt.Sprintf("has spent its %d %s", n, what))
		}
		return nil
	}
	apply := func(id string) error {
		return charge(id, q.applies, time.Minute, func(qt Quota) int { return qt.AppliesPerMinute }, "applies per minute")
	}
	signal := func(id string) error {
		return charge(id, q.signals, time.Second, func(qt Quota) int { return qt.SignalsPerSecond }, "signals per second")
	}
	start := func(ns, id string) error {
		if err := apply(id); err != nil {
			return err
		}
		org, ok := poolOrg(id)
		if !ok || q.pools == nil {
			return nil
		}
		qt := q.quota(org)
		if qt.MaxPools <= 0 {
			return nil
		}
		if running, err := q.pools.Running(ctx, ns, id); err != nil || running {
			return err // an apply to a running pool adds none
		}
		n, err := q.pools.RunningPools(ctx, ns, org)
		if err != nil {
			return fmt.Errorf("%s: count org %s's pools: %w", name, org, err)
		}
		if n >= qt.MaxPools {
			return refuse(org, fmt.Sprintf("runs %d pools, its limit is %d", n, qt.MaxPools))
		}
		return nil
	}
	switch r := req.(type) {
	case *workflowservice.StartWorkflowExecutionRequest:
		return start(r.GetNamespace(), r.GetWorkflowId())
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		if err := signal(r.GetWorkflowId()); err != nil {
			return err
		}
		return start(r.GetNamespace(), r.GetWorkflowId())
	case *workflowservice.ExecuteMultiOperationRequest:
		for _, op := range r.GetOperations() {
			if s := op.GetStartWorkflow(); s != nil {
				return start(r.GetNamespace(), s.GetWorkflowId())
			}
		}
	case *workflowservice.UpdateWorkflowExecutionRequest:
		return apply(r.GetWorkflowExecution().GetWorkflowId())
	case *workflowservice.SignalWorkflowExecutionRequest:
		return signal(r.GetWorkflowExecution().GetWorkflowId())
	}
	return nil
}

func methodName(method string) string {
	for i := len(method) - 1; i >= 0; i-- {
		if method[i] == '/' {
			return method[i+1:]
		}
	}
	return method
}

func poolOrg(id string) (string, bool) {
	k, err := types.ParsePoolID(id)
	if err != nil {
		return "", false
	}
	return k.Org, true
}
