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

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func TestClassifyErrorMapsAPIStatuses(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	cases := []struct {
		name       string
		err        error
		class      errclass.Class
		retryAfter time.Duration
	}{
		{"429 with retry-after", apierrors.NewTooManyRequests("slow down", 7), errclass.RateLimited, 7 * time.Second},
		{"429 without", apierrors.NewTooManyRequestsError("slow down"), errclass.RateLimited, 0},
		{"500", apierrors.NewInternalError(errors.New("boom")), errclass.Retryable, 0},
		{"503", apierrors.NewServiceUnavailable("down"), errclass.Retryable, 0},
		{"server timeout", apierrors.NewServerTimeout(pods, "list", 3), errclass.Retryable, 3 * time.Second},
		{"504 timeout", apierrors.NewTimeoutError("slow", 0), errclass.Retryable, 0},
		{"401", apierrors.NewUnauthorized("who"), errclass.Permanent, 0},
		{"403", apierrors.NewForbidden(pods, "x", errors.New("no")), errclass.Permanent, 0},
		{"400", apierrors.NewBadRequest("bad"), errclass.Permanent, 0},
		{"422", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "x", nil), errclass.Permanent, 0},
		{"404", apierrors.NewNotFound(pods, "x"), errclass.NotFound, 0},
		{"409", apierrors.NewConflict(pods, "x", errors.New("changed")), errclass.Retryable, 0},
		{"410", apierrors.NewResourceExpired("too old"), errclass.Retryable, 0},
		{"network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, errclass.Retryable, 0},
		{"cancelled", fmt.Errorf("list: %w", context.Canceled), errclass.Retryable, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := classifyError("op", tc.err)
			assert.Equal(t, tc.class, errclass.Of(err))
			assert.Equal(t, tc.retryAfter, errclass.RetryAfterOf(err))
			assert.ErrorIs(t, err, tc.err, "the API error stays reachable")
		})
	}
	assert.NoError(t, classifyError("op", nil))
	already := errclass.New(errclass.NotFound, "x", "y", nil)
	assert.Same(t, already, classifyError("op", already))
}
