package kubernetes

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// classifyError maps a client-go error into the connector error classes, so
// activities turn API server answers into the right Temporal retry
// behaviour. Already-classified errors pass through unchanged.
func classifyError(op string, err error) error {
	return ClassifyError(providerName, op, err)
}

// ClassifyError is classifyError for another connector whose SDK is
// client-go (kwok's nodes live in an API server): errors carry provider.
func ClassifyError(provider, op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	e := errclass.New(classOf(err), provider, op, err)
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok && seconds > 0 {
		e.RetryAfter = time.Duration(seconds) * time.Second
	}
	return e
}

func classOf(err error) errclass.Class {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errclass.Retryable
	case apierrors.IsTooManyRequests(err):
		return errclass.RateLimited
	case apierrors.IsNotFound(err):
		return errclass.NotFound
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err),
		apierrors.IsBadRequest(err), apierrors.IsInvalid(err),
		apierrors.IsMethodNotSupported(err), apierrors.IsNotAcceptable(err),
		apierrors.IsUnsupportedMediaType(err), apierrors.IsRequestEntityTooLargeError(err):
		return errclass.Permanent
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		// Conflicts and expired lists resolve by reading again; 5xx and
		// timeouts are the server's transient faults.
		if code >= 400 && code < 500 && code != 408 && code != 409 && code != 410 {
			return errclass.Permanent
		}
	}
	// Network faults, timeouts, 5xx: transient, bounded by the retry policy.
	return errclass.Retryable
}
