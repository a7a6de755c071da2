package starter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// queryBackoff is how a transient query failure is retried: registration
// is idempotent, so asking again is always safe, and one failed query must
// not end `visor dev` or `pool apply`. About 20 s in all.
var queryBackoff = backoff{first: 250 * time.Millisecond, most: 5 * time.Second, attempts: 8}

type backoff struct {
	first, most time.Duration
	attempts    int
}

// query runs a workflow query, retrying the failures that say nothing
// about the workflow itself: the worker lost or busy, the server
// overloaded, the workflow's first task not done yet, and a query that
// failed inside the worker (the SDK's query race, Temporal Go SDK issue
// #755, fails one query with TMPRL1100 and answers the next). A workflow
// that does not exist, a refused caller or a bad argument is final.
func query(ctx context.Context, c client.Client, workflowID, queryType string, out any) error {
	wait := queryBackoff.first
	for attempt := 1; ; attempt++ {
		resp, err := c.QueryWorkflow(ctx, workflowID, "", queryType)
		if err == nil {
			return resp.Get(out)
		}
		if !transientQueryError(err) || attempt >= queryBackoff.attempts || ctx.Err() != nil {
			if attempt > 1 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, queryBackoff.most)
	}
}

func transientQueryError(err error) bool {
	var (
		failed      *serviceerror.QueryFailed
		unavailable *serviceerror.Unavailable
		deadline    *serviceerror.DeadlineExceeded
		exhausted   *serviceerror.ResourceExhausted
		internal    *serviceerror.Internal
		notReady    *serviceerror.WorkflowNotReady
	)
	return errors.As(err, &failed) || errors.As(err, &unavailable) || errors.As(err, &deadline) ||
		errors.As(err, &exhausted) || errors.As(err, &internal) || errors.As(err, &notReady)
}
