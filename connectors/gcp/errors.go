package gcp

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// defaultThrottleWait is used when a throttled answer names no wait:
// Compute's per-minute API rate quotas refill within a minute.
const defaultThrottleWait = 20 * time.Second

// codeClasses are the Compute error codes of operations and of instances a
// MIG could not create (lastAttempt), whose class is known.
var codeClasses = map[string]errclass.Class{
	"ZONE_RESOURCE_POOL_EXHAUSTED":              errclass.InsufficientCapacity,
	"ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS": errclass.InsufficientCapacity,
	"RESOURCE_POOL_EXHAUSTED":                   errclass.InsufficientCapacity,
	"REGION_RESOURCE_POOL_EXHAUSTED":            errclass.InsufficientCapacity,
	"STOCKOUT":                                  errclass.InsufficientCapacity,
	"UNSUPPORTED_OPERATION":                     errclass.Permanent,

	"QUOTA_EXCEEDED":                      errclass.Permanent,
	"INVALID_FIELD_VALUE":                 errclass.Permanent,
	"RESOURCE_NOT_FOUND":                  errclass.NotFound,
	"RESOURCE_ALREADY_EXISTS":             errclass.Permanent,
	"CONDITION_NOT_MET":                   errclass.Retryable,
	"RESOURCE_NOT_READY":                  errclass.Retryable,
	"RESOURCE_IN_USE_BY_ANOTHER_RESOURCE": errclass.Retryable,
	"INTERNAL_ERROR":                      errclass.Retryable,
	"SERVICE_UNAVAILABLE":                 errclass.Retryable,
	"RATE_LIMIT_EXCEEDED":                 errclass.RateLimited,
}

// reasonClasses are the reasons of an HTTP error's body (errors[].reason).
var reasonClasses = map[string]errclass.Class{
	"rateLimitExceeded":              errclass.RateLimited,
	"userRateLimitExceeded":          errclass.RateLimited,
	"quotaExceeded":                  errclass.Permanent,
	"notFound":                       errclass.NotFound,
	"alreadyExists":                  errclass.Permanent,
	"invalid":                        errclass.Permanent,
	"badRequest":                     errclass.Permanent,
	"resourceNotReady":               errclass.Retryable,
	"resourceInUseByAnotherResource": errclass.Retryable,
	"backendError":                   errclass.Retryable,
	"internalError":                  errclass.Retryable,
	"conditionNotMet":                errclass.Retryable,
}

// opError is an operation that finished with errors.
type opError struct {
	status int // httpErrorStatusCode
	codes  []string
	msgs   []string
}

func (e *opError) Error() string {
	parts := make([]string, len(e.codes))
	for i := range e.codes {
		parts[i] = e.codes[i] + ": " + e.msgs[i]
	}
	return "operation failed: " + strings.Join(parts, "; ")
}

// class is the first known class among the error's codes.
func (e *opError) class() errclass.Class {
	for _, c := range e.codes {
		if class, ok := codeClasses[c]; ok {
			return class
		}
	}
	return classOfStatus(e.status)
}

func classOfStatus(status int) errclass.Class {
	switch {
	case status == http.StatusTooManyRequests:
		return errclass.RateLimited
	case status == http.StatusNotFound:
		return errclass.NotFound
	case status >= 500 || status == 0:
		return errclass.Retryable
	default:
		return errclass.Permanent
	}
}

// classify maps an SDK failure onto the connector error classes: a
// refused login first, then the error body's reason, then HTTP status.
// Auth failures name the credential reference, never the key.
func (p *Provider) classify(op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	var (
		authErr  *auth.Error
		retrieve *oauth2.RetrieveError
		oe       *opError
		ge       *googleapi.Error
	)
	switch {
	case errors.As(err, &authErr):
		if authErr.Response != nil && authErr.Response.StatusCode >= 500 {
			return errclass.New(errclass.Retryable, ProviderName, op, err)
		}
		return p.refused(op, err)
	case errors.As(err, &retrieve):
		if retrieve.Response != nil && retrieve.Response.StatusCode >= 500 {
			return errclass.New(errclass.Retryable, ProviderName, op, err)
		}
		return p.refused(op, err)
	case errors.As(err, &oe):
		return p.typed(op, oe.class(), nil, err)
	case errors.As(err, &ge):
		class, known := errclass.Class(""), false
		for _, item := range ge.Errors {
			if class, known = reasonClasses[item.Reason]; known {
				break
			}
		}
		switch {
		case known:
		case ge.Code == http.StatusUnauthorized || ge.Code == http.StatusForbidden:
			return p.refused(op, err)
		default:
			class = classOfStatus(ge.Code)
		}
		return p.typed(op, class, ge.Header, err)
	default:
		// No answer at all (connection refused, timeout): transient.
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	}
}

func (p *Provider) typed(op string, class errclass.Class, h http.Header, err error) error {
	e := errclass.New(class, ProviderName, op, err)
	if class == errclass.RateLimited {
		e.RetryAfter = errclass.RetryAfterOr(h, time.Now(), defaultThrottleWait)
	}
	return e
}

func (p *Provider) refused(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op,
		fmt.Errorf("Google refused the service account key from %s or its permissions: %w", p.cfg.Credentials, err))
}

// isNotFound reports an answer that the resource does not exist.
func isNotFound(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusNotFound
}

// isAlreadyExists reports a create refused because the name is taken.
func isAlreadyExists(err error) bool {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return false
	}
	for _, item := range ge.Errors {
		if item.Reason == "alreadyExists" {
			return true
		}
	}
	return ge.Code == http.StatusConflict
}
