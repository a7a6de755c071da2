package aws

import (
	"errors"
	"fmt"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// codeClasses are the AWS error codes (EC2, Auto Scaling, EKS) whose class
// is known exactly; prefix and suffix rules in classOfCode cover families.
var codeClasses = map[string]errclass.Class{
	"Throttling":                errclass.RateLimited,
	"ThrottlingException":       errclass.RateLimited,
	"RequestLimitExceeded":      errclass.RateLimited,
	"TooManyRequestsException":  errclass.RateLimited,
	"RequestThrottled":          errclass.RateLimited,
	"RequestThrottledException": errclass.RateLimited,
	"SlowDown":                  errclass.RateLimited,

	"InsufficientInstanceCapacity":         errclass.InsufficientCapacity,
	"InsufficientCapacity":                 errclass.InsufficientCapacity,
	"InsufficientHostCapacity":             errclass.InsufficientCapacity,
	"InsufficientReservedInstanceCapacity": errclass.InsufficientCapacity,
	"InsufficientCapacityOnHost":           errclass.InsufficientCapacity,
	// EC2 says Unsupported when an instance type is not offered in the zone.
	"Unsupported": errclass.InsufficientCapacity,

	// The same token was sent with different parameters: a bug, not a blip.
	"IdempotentParameterMismatch": errclass.Permanent,

	"RequestTimeout":              errclass.Retryable,
	"RequestTimeoutException":     errclass.Retryable,
	"ServiceUnavailable":          errclass.Retryable,
	"ServiceUnavailableException": errclass.Retryable,
	"Unavailable":                 errclass.Retryable,
	"InternalError":               errclass.Retryable,
	"InternalFailure":             errclass.Retryable,
	"ServerException":             errclass.Retryable,
	"ScalingActivityInProgress":   errclass.Retryable,
	"ResourceContention":          errclass.Retryable,
	// EKS: the node group is mid-update; the next attempt will get through.
	"ResourceInUseException": errclass.Retryable,
	"IncorrectInstanceState": errclass.Retryable,

	"ValidationError":                errclass.Permanent,
	"ValidationException":            errclass.Permanent,
	"MissingParameter":               errclass.Permanent,
	"OptInRequired":                  errclass.Permanent,
	"ResourceLimitExceeded":          errclass.Permanent,
	"ResourceLimitExceededException": errclass.Permanent,
	"LimitExceeded":                  errclass.Permanent,
	"LimitExceededException":         errclass.Permanent,
	"InstanceLimitExceeded":          errclass.Permanent,
	"VcpuLimitExceeded":              errclass.Permanent,
}

// authCodes mean AWS rejected the credential itself; see isAuthCode.
var authCodes = map[string]bool{
	"UnauthorizedOperation":       true,
	"AuthFailure":                 true,
	"InvalidClientTokenId":        true,
	"SignatureDoesNotMatch":       true,
	"UnrecognizedClientException": true,
	"ExpiredToken":                true,
	"ExpiredTokenException":       true,
	"AccessDenied":                true,
	"AccessDeniedException":       true,
}

// isAuthCode reports whether code means AWS rejected the credential or its
// permissions.
func isAuthCode(code string) bool {
	return authCodes[code] || strings.HasPrefix(code, "AccessDenied")
}

// classOfCode maps one AWS error code; ok is false for codes it does not know.
func classOfCode(code string) (class errclass.Class, ok bool) {
	if c, found := codeClasses[code]; found {
		return c, true
	}
	switch {
	case isAuthCode(code):
		return errclass.Permanent, true
	// Before Invalid*: InvalidInstanceID.NotFound is a NotFound.
	case strings.Contains(code, "NotFound"):
		return errclass.NotFound, true
	case strings.HasPrefix(code, "Invalid"):
		return errclass.Permanent, true
	}
	return "", false
}

// ClassOf classifies an error returned by an AWS SDK call: by API error
// code first, then by HTTP status, and Retryable for anything else (network
// faults), bounded by the activity's retry policy.
func ClassOf(err error) errclass.Class {
	if c, ok := classOfCode(errorCode(err)); ok {
		return c
	}
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		switch s := respErr.HTTPStatusCode(); {
		case s == 429:
			return errclass.RateLimited
		case s >= 500:
			return errclass.Retryable
		case s == 401 || s == 403:
			return errclass.Permanent
		}
	}
	return errclass.Retryable
}

// classify wraps err as a *errclass.Error for op. When AWS rejected the
// credential, the message names the reference (never the secret).
func (p *Provider) classify(op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	if isAuthCode(errorCode(err)) {
		err = fmt.Errorf("AWS rejected credential %s or its permissions: %w", p.cfg.Credentials, err)
	}
	return errclass.New(ClassOf(err), ProviderName, op, err)
}

// errorCode is the AWS error code of err, or "".
func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
