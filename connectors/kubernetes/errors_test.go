package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hanzoai/visor-fleet/connectors"
)

func TestClassifyErrorMapsAPIStatuses(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	cases := []struct {
		name       string
		err        error
		class      connectors.ErrorClass
		retryAfter time.Duration
	}{
		{"429 with retry-after", apierrors.NewTooManyRequests("slow down", 7), connectors.RateLimited, 7 * time.Second},
		{"429 without", apierrors.NewTooManyRequestsError("slow down"), connectors.RateLimited, 0},
		{"500", apierrors.NewInternalError(errors.New("boom")), connectors.Retryable, 0},
		{"503", apierrors.NewServiceUnavailable("down"), connectors.Retryable, 0},
		{"server timeout", apierrors.NewServerTimeout(pods, "list", 3), connectors.Retryable, 3 * time.Second},
		{"504 timeout", apierrors.NewTimeoutError("slow", 0), connectors.Retryable, 0},
		{"401", apierrors.NewUnauthorized("who"), connectors.Permanent, 0},
		{"403", apierrors.NewForbidden(pods, "x", errors.New("no")), connectors.Permanent, 0},
		{"400", apierrors.NewBadRequest("bad"), connectors.Permanent, 0},
		{"422", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "x", nil), connectors.Permanent, 0},
		{"404", apierrors.NewNotFound(pods, "x"), connectors.NotFound, 0},
		{"409", apierrors.NewConflict(pods, "x", errors.New("changed")), connectors.Retryable, 0},
		{"410", apierrors.NewResourceExpired("too old"), connectors.Retryable, 0},
		{"network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, connectors.Retryable, 0},
		{"cancelled", fmt.Errorf("list: %w", context.Canceled), connectors.Retryable, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := classifyError("op", tc.err)
			assert.Equal(t, tc.class, connectors.ClassOf(err))
			assert.Equal(t, tc.retryAfter, connectors.RetryAfterOf(err))
			assert.ErrorIs(t, err, tc.err, "the API error stays reachable")
		})
	}
	assert.NoError(t, classifyError("op", nil))
	already := connectors.NewError(connectors.NotFound, "x", "y", nil)
	assert.Same(t, already, classifyError("op", already))
}
