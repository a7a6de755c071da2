package aws

import (
	"errors"
	"fmt"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/hanzoai/visor-fleet/connectors"
)

// codeClasses are the AWS error codes (EC2, Auto Scaling, EKS) whose class
// is known exactly; prefix and suffix rules in classOfCode cover families.
var codeClasses = map[string]connectors.ErrorClass{
	"Throttling":                connectors.RateLimited,
	"ThrottlingException":       connectors.RateLimited,
	"RequestLimitExceeded":      connectors.RateLimited,
	"TooManyRequestsException":  connectors.RateLimited,
	"RequestThrottled":          connectors.RateLimited,
	"RequestThrottledException": connectors.RateLimited,
	"SlowDown":                  connectors.RateLimited,

	"InsufficientInstanceCapacity":         connectors.InsufficientCapacity,
	"InsufficientCapacity":                 connectors.InsufficientCapacity,
	"InsufficientHostCapacity":             connectors.InsufficientCapacity,
	"InsufficientReservedInstanceCapacity": connectors.InsufficientCapacity,
	"InsufficientCapacityOnHost":           connectors.InsufficientCapacity,
	// EC2 says Unsupported when an instance type is not offered in the zone.
	"Unsupported": connectors.InsufficientCapacity,

	// The same token was sent with different parameters: a bug, not a blip.
	"IdempotentParameterMismatch": connectors.Permanent,

	"RequestTimeout":              connectors.Retryable,
	"RequestTimeoutException":     connectors.Retryable,
	"ServiceUnavailable":          connectors.Retryable,
	"ServiceUnavailableException": connectors.Retryable,
	"Unavailable":                 connectors.Retryable,
	"InternalError":               connectors.Retryable,
	"InternalFailure":             connectors.Retryable,
	"ServerException":             connectors.Retryable,
	"ScalingActivityInProgress":   connectors.Retryable,
	"ResourceContention":          connectors.Retryable,
	// EKS: the node group is mid-update; the next attempt will get through.
	"ResourceInUseException": connectors.Retryable,
	"IncorrectInstanceState": connectors.Retryable,

	"ValidationError":                connectors.Permanent,
	"ValidationException":            connectors.Permanent,
	"MissingParameter":               connectors.Permanent,
	"OptInRequired":                  connectors.Permanent,
	"ResourceLimitExceeded":          connectors.Permanent,
	"ResourceLimitExceededException": connectors.Permanent,
	"LimitExceeded":                  connectors.Permanent,
	"LimitExceededException":         connectors.Permanent,
	"InstanceLimitExceeded":          connectors.Permanent,
	"VcpuLimitExceeded":              connectors.Permanent,
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
func classOfCode(code string) (class connectors.ErrorClass, ok bool) {
	if c, found := codeClasses[code]; found {
		return c, true
	}
	switch {
	case isAuthCode(code):
		return connectors.Permanent, true
	// Before Invalid*: InvalidInstanceID.NotFound is a NotFound.
	case strings.Contains(code, "NotFound"):
		return connectors.NotFound, true
	case strings.HasPrefix(code, "Invalid"):
		return connectors.Permanent, true
	}
	return "", false
}

// ClassOf classifies an error returned by an AWS SDK call: by API error
// code first, then by HTTP status, and Retryable for anything else (network
// faults), bounded by the activity's retry policy.
func ClassOf(err error) connectors.ErrorClass {
	if c, ok := classOfCode(errorCode(err)); ok {
		return c
	}
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		switch s := respErr.HTTPStatusCode(); {
		case s == 429:
			return connectors.RateLimited
		case s >= 500:
			return connectors.Retryable
		case s == 401 || s == 403:
			return connectors.Permanent
		}
	}
	return connectors.Retryable
}

// classify wraps err as a *connectors.Error for op. When AWS rejected the
// credential, the message names the reference (never the secret).
func (p *Provider) classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var typed *connectors.Error
	if errors.As(err, &typed) {
		return err
	}
	if isAuthCode(errorCode(err)) {
		err = fmt.Errorf("AWS rejected credential %s or its permissions: %w", p.cfg.Credentials, err)
	}
	return connectors.NewError(ClassOf(err), ProviderName, op, err)
}

// errorCode is the AWS error code of err, or "".
func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
