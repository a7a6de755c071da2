package azure

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// defaultThrottleWait is used when a 429 names no moment to come back;
// ARM's subscription buckets refill within a minute.
const defaultThrottleWait = 20 * time.Second

// codeClasses are the ARM and Compute error codes whose class is known.
var codeClasses = map[string]errclass.Class{
	"SkuNotAvailable":                       errclass.InsufficientCapacity,
	"AllocationFailed":                      errclass.InsufficientCapacity,
	"ZonalAllocationFailed":                 errclass.InsufficientCapacity,
	"OverconstrainedAllocationRequest":      errclass.InsufficientCapacity,
	"OverconstrainedZonalAllocationRequest": errclass.InsufficientCapacity,

	"QuotaExceeded":             errclass.Permanent,
	"OperationNotAllowed":       errclass.Permanent, // how Compute says a cores quota is reached
	"InvalidParameter":          errclass.Permanent,
	"InvalidTemplate":           errclass.Permanent,
	"LinkedAuthorizationFailed": errclass.Permanent,

	"ResourceNotFound":      errclass.NotFound,
	"NotFound":              errclass.NotFound,
	"ResourceGroupNotFound": errclass.NotFound,

	"Conflict":                         errclass.Retryable, // another operation holds the scale set
	"OperationPreempted":               errclass.Retryable,
	"RetryableError":                   errclass.Retryable,
	"InternalServerError":              errclass.Retryable,
	"InternalOperationError":           errclass.Retryable,
	"ScaleSetVMsInPendingDeletion":     errclass.Retryable,
	"TooManyRequests":                  errclass.RateLimited,
	"SubscriptionRequestsThrottled":    errclass.RateLimited,
	"OperationNotAllowedDueToThrottle": errclass.RateLimited,
}

// authCodes mean ARM refused the token or the principal's permissions.
var authCodes = map[string]bool{
	"AuthenticationFailed":             true,
	"InvalidAuthenticationToken":       true,
	"InvalidAuthenticationTokenTenant": true,
	"ExpiredAuthenticationToken":       true,
	"AuthorizationFailed":              true,
}

// classify maps an SDK failure onto the connector error classes: by ARM
// error code, then HTTP status; a failure to get a token from Entra ID is
// Permanent. Auth failures name the credential reference, never the secret.
func (p *Provider) classify(op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	var idErr *azidentity.AuthenticationFailedError
	if errors.As(err, &idErr) {
		return p.refused(op, err)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		// No answer at all (connection refused, timeout): transient.
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	}
	if authCodes[re.ErrorCode] || re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden {
		return p.refused(op, err)
	}
	class, known := codeClasses[re.ErrorCode]
	switch {
	case known:
	case re.StatusCode == http.StatusTooManyRequests:
		class = errclass.RateLimited
	case re.StatusCode == http.StatusNotFound:
		class = errclass.NotFound
	case re.StatusCode >= 500:
		class = errclass.Retryable
	default:
		class = errclass.Permanent
	}
	e := errclass.New(class, ProviderName, op, err)
	if class == errclass.RateLimited {
		var h http.Header
		if re.RawResponse != nil {
			h = re.RawResponse.Header
		}
		e.RetryAfter = errclass.RetryAfterOr(h, time.Now(), defaultThrottleWait)
	}
	return e
}

func (p *Provider) refused(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op,
		fmt.Errorf("Azure refused credential %s or its permissions: %w", p.cfg.Credentials, err))
}

// isNotFound reports an answer that the object does not exist.
func isNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && (re.StatusCode == http.StatusNotFound || codeClasses[re.ErrorCode] == errclass.NotFound)
}
