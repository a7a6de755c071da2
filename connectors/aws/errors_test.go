package aws

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"

	"github.com/hanzoai/visor-fleet/connectors"
)

func TestClassOfAPIErrorCodes(t *testing.T) {
	cases := map[string]connectors.ErrorClass{
		"Throttling":                                  connectors.RateLimited,
		"ThrottlingException":                         connectors.RateLimited,
		"RequestLimitExceeded":                        connectors.RateLimited,
		"InsufficientInstanceCapacity":                connectors.InsufficientCapacity,
		"InsufficientCapacity":                        connectors.InsufficientCapacity,
		"Unsupported":                                 connectors.InsufficientCapacity,
		"InvalidInstanceID.NotFound":                  connectors.NotFound,
		"ResourceNotFoundException":                   connectors.NotFound,
		"InvalidLaunchTemplateName.NotFoundException": connectors.NotFound,
		"UnauthorizedOperation":                       connectors.Permanent,
		"AuthFailure":                                 connectors.Permanent,
		"InvalidClientTokenId":                        connectors.Permanent,
		"AccessDenied":                                connectors.Permanent,
		"AccessDeniedException":                       connectors.Permanent,
		"InvalidParameterValue":                       connectors.Permanent,
		"InvalidAMIID.Malformed":                      connectors.Permanent,
		"ValidationError":                             connectors.Permanent,
		"IdempotentParameterMismatch":                 connectors.Permanent,
		"VcpuLimitExceeded":                           connectors.Permanent,
		"RequestTimeout":                              connectors.Retryable,
		"ServiceUnavailable":                          connectors.Retryable,
		"InternalError":                               connectors.Retryable,
		"ScalingActivityInProgress":                   connectors.Retryable,
		"ResourceInUseException":                      connectors.Retryable,
		"SomethingNobodyHasSeen":                      connectors.Retryable,
	}
	for code, want := range cases {
		err := &smithy.GenericAPIError{Code: code, Message: "m"}
		assert.Equal(t, want, ClassOf(err), code)
		// As the SDK returns it: wrapped in an OperationError.
		wrapped := &smithy.OperationError{ServiceID: "EC2", OperationName: "RunInstances", Err: err}
		assert.Equal(t, want, ClassOf(wrapped), "wrapped "+code)
	}
}

func TestClassOfHTTPStatusWithoutKnownCode(t *testing.T) {
	status := func(code int) error {
		return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}},
			Err:      &smithy.GenericAPIError{Code: "Odd"},
		}}
	}
	assert.Equal(t, connectors.Retryable, ClassOf(status(503)))
	assert.Equal(t, connectors.Retryable, ClassOf(status(500)))
	assert.Equal(t, connectors.RateLimited, ClassOf(status(429)))
	assert.Equal(t, connectors.Permanent, ClassOf(status(403)))
	assert.Equal(t, connectors.Retryable, ClassOf(errors.New("connection reset by peer")))
}

func TestClassifyNamesCredentialReferenceOnAuthFailure(t *testing.T) {
	p := &Provider{cfg: Config{Credentials: "secret:fleet/aws-creds/key"}}
	err := p.classify("RunInstances", &smithy.GenericAPIError{Code: "AuthFailure", Message: "AWS was not able to validate the provided access credentials"})
	var typed *connectors.Error
	assert.True(t, errors.As(err, &typed))
	assert.Equal(t, connectors.Permanent, typed.Class)
	assert.Contains(t, err.Error(), "secret:fleet/aws-creds/key")

	err = p.classify("RunInstances", &smithy.GenericAPIError{Code: "InsufficientInstanceCapacity"})
	assert.True(t, connectors.IsInsufficientCapacity(err))
	assert.NotContains(t, err.Error(), "secret:fleet")

	already := connectors.NewError(connectors.NotFound, ProviderName, "x", fmt.Errorf("gone"))
	assert.Same(t, already, p.classify("y", already), "typed errors pass through")
	assert.NoError(t, p.classify("z", nil))
}
