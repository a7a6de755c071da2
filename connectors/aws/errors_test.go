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
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func TestClassOfAPIErrorCodes(t *testing.T) {
	cases := map[string]errclass.Class{
		"Throttling":                                  errclass.RateLimited,
		"ThrottlingException":                         errclass.RateLimited,
		"RequestLimitExceeded":                        errclass.RateLimited,
		"InsufficientInstanceCapacity":                errclass.InsufficientCapacity,
		"InsufficientCapacity":                        errclass.InsufficientCapacity,
		"Unsupported":                                 errclass.InsufficientCapacity,
		"InvalidInstanceID.NotFound":                  errclass.NotFound,
		"ResourceNotFoundException":                   errclass.NotFound,
		"InvalidLaunchTemplateName.NotFoundException": errclass.NotFound,
		"UnauthorizedOperation":                       errclass.Permanent,
		"AuthFailure":                                 errclass.Permanent,
		"InvalidClientTokenId":                        errclass.Permanent,
		"AccessDenied":                                errclass.Permanent,
		"AccessDeniedException":                       errclass.Permanent,
		"InvalidParameterValue":                       errclass.Permanent,
		"InvalidAMIID.Malformed":                      errclass.Permanent,
		"ValidationError":                             errclass.Permanent,
		"IdempotentParameterMismatch":                 errclass.Permanent,
		"VcpuLimitExceeded":                           errclass.Permanent,
		"RequestTimeout":                              errclass.Retryable,
		"ServiceUnavailable":                          errclass.Retryable,
		"InternalError":                               errclass.Retryable,
		"ScalingActivityInProgress":                   errclass.Retryable,
		"ResourceInUseException":                      errclass.Retryable,
		"SomethingNobodyHasSeen":                      errclass.Retryable,
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
	assert.Equal(t, errclass.Retryable, ClassOf(status(503)))
	assert.Equal(t, errclass.Retryable, ClassOf(status(500)))
	assert.Equal(t, errclass.RateLimited, ClassOf(status(429)))
	assert.Equal(t, errclass.Permanent, ClassOf(status(403)))
	assert.Equal(t, errclass.Retryable, ClassOf(errors.New("connection reset by peer")))
}

func TestClassifyNamesCredentialReferenceOnAuthFailure(t *testing.T) {
	p := &Provider{cfg: Config{CommonConfig: connectors.CommonConfig{Credentials: "secret:fleet/aws-creds/key"}}}
	err := p.classify("RunInstances", &smithy.GenericAPIError{Code: "AuthFailure", Message: "AWS was not able to validate the provided access credentials"})
	var typed *errclass.Error
	assert.True(t, errors.As(err, &typed))
	assert.Equal(t, errclass.Permanent, typed.Class)
	assert.Contains(t, err.Error(), "secret:fleet/aws-creds/key")

	err = p.classify("RunInstances", &smithy.GenericAPIError{Code: "InsufficientInstanceCapacity"})
	assert.True(t, errclass.IsInsufficientCapacity(err))
	assert.NotContains(t, err.Error(), "secret:fleet")

	already := errclass.New(errclass.NotFound, ProviderName, "x", fmt.Errorf("gone"))
	assert.Same(t, already, p.classify("y", already), "typed errors pass through")
	assert.NoError(t, p.classify("z", nil))
}
