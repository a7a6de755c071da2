package kubernetes

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/hanzoai/visor-fleet/connectors"
)

// classifyError maps a client-go error into the connector error classes, so
// activities turn API server answers into the right Temporal retry
// behaviour. Already-classified errors pass through unchanged.
func classifyError(op string, err error) error {
	if err == nil {
		return nil
	}
	var typed *connectors.Error
	if errors.As(err, &typed) {
		return err
	}
	e := connectors.NewError(classOf(err), providerName, op, err)
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok && seconds > 0 {
		e.RetryAfter = time.Duration(seconds) * time.Second
	}
	return e
}

func classOf(err error) connectors.ErrorClass {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return connectors.Retryable
	case apierrors.IsTooManyRequests(err):
		return connectors.RateLimited
	case apierrors.IsNotFound(err):
		return connectors.NotFound
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err),
		apierrors.IsBadRequest(err), apierrors.IsInvalid(err),
		apierrors.IsMethodNotSupported(err), apierrors.IsNotAcceptable(err),
		apierrors.IsUnsupportedMediaType(err), apierrors.IsRequestEntityTooLargeError(err):
		return connectors.Permanent
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		// Conflicts and expired lists resolve by reading again; 5xx and
		// timeouts are the server's transient faults.
		if code >= 400 && code < 500 && code != 408 && code != 409 && code != 410 {
			return connectors.Permanent
		}
	}
	// Network faults, timeouts, 5xx: transient, bounded by the retry policy.
	return connectors.Retryable
}
