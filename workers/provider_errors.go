package workers

import (
	"context"
	"errors"
	"slices"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// MetricProviderErrors counts activity attempts that failed with a
// classified error (Retryable, RateLimited, InsufficientCapacity, NotFound, Permanent), by
// class, activity and the pool's labels; the Prometheus exporter adds
// "_total".
const MetricProviderErrors = "visor_provider_errors"

// errorClasses are the classes an activity error's type may name.
var errorClasses = []string{
	string(errclass.Retryable), string(errclass.RateLimited), string(errclass.InsufficientCapacity),
	string(errclass.NotFound), string(errclass.Permanent),
}

// providerErrorCounter is a worker interceptor: every activity error that
// carries an error class is counted once per attempt, where every provider
// call's error passes, so no activity has to remember to.
type providerErrorCounter struct {
	interceptor.WorkerInterceptorBase
}

func (*providerErrorCounter) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &countingActivity{}
	i.Next = next
	return i
}

type countingActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (c *countingActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	out, err := c.Next.ExecuteActivity(ctx, in)
	var appErr *temporal.ApplicationError
	if err != nil && errors.As(err, &appErr) && slices.Contains(errorClasses, appErr.Type()) {
		info := activity.GetInfo(ctx)
		tags := map[string]string{"class": appErr.Type(), "activity": info.ActivityType.Name}
		for k, v := range ownerLabels(info.WorkflowExecution.ID) {
			tags[k] = v
		}
		activity.GetMetricsHandler(ctx).WithTags(tags).Counter(MetricProviderErrors).Inc(1)
	}
	return out, err
}

// ownerLabels are the pool labels of the workflow that ran the activity (a
// pool's ID names them; a cluster workflow's names only its cluster).
func ownerLabels(workflowID string) map[string]string {
	if k, err := types.ParsePoolID(workflowID); err == nil {
		return map[string]string{"pool": workflowID, "org": k.Org, "provider": k.Provider, "cluster": k.Cluster}
	}
	if id, ok := strings.CutPrefix(workflowID, "cluster/"); ok {
		return map[string]string{"pool": "", "org": "", "provider": "", "cluster": id}
	}
	return map[string]string{"pool": "", "org": "", "provider": "", "cluster": ""}
}
