package hetzner

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// defaultRateLimitWait is used when a throttled answer carries no usable
// rate-limit headers: the project's bucket refills one request a second
// at the default limit.
const defaultRateLimitWait = 5 * time.Second

// classify maps an hcloud failure onto the connector error classes by the
// API's error code, or by HTTP status when the answer had no error body.
// resp may be nil. Auth failures name the credential reference, never the
// token.
func (p *Provider) classify(op string, resp *hcloud.Response, err error) error {
	if err == nil {
		return nil
	}
	var apiErr hcloud.Error
	if errors.As(err, &apiErr) {
		if r := apiErr.Response(); r != nil {
			resp = r
		}
		return p.classifyCode(op, apiErr.Code, resp, err)
	}
	if errors.Is(err, hcloud.ErrStatusCode) && resp != nil && resp.Response != nil {
		return p.classifyStatus(op, resp, err)
	}
	// No answer at all (connection refused, timeout): transient.
	return errclass.New(errclass.Retryable, ProviderName, op, err)
}

func (p *Provider) classifyCode(op string, code hcloud.ErrorCode, resp *hcloud.Response, err error) error {
	switch code {
	case hcloud.ErrorCodeRateLimitExceeded:
		return p.rateLimited(op, resp, err)
	case hcloud.ErrorCodeLocked, hcloud.ErrorCodeConflict, hcloud.ErrorCodeTimeout, hcloud.ErrorCodeServerError,
		hcloud.ErrorCodeBadGateway, hcloud.ErrorCodeServiceError, hcloud.ErrorCodeMaintenance,
		hcloud.ErrorCodeRobotUnavailable, hcloud.ErrorCodeUnknownError:
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	case hcloud.ErrorCodeResourceUnavailable, hcloud.ErrorCodePlacementError:
		return errclass.New(errclass.InsufficientCapacity, ProviderName, op, err)
	case hcloud.ErrorCodeNotFound:
		return errclass.New(errclass.NotFound, ProviderName, op, err)
	case hcloud.ErrorCodeUnauthorized, hcloud.ErrorCodeForbidden:
		return p.refused(op, err)
	default: // invalid_input, uniqueness_error, resource_limit_exceeded, ...
		return errclass.New(errclass.Permanent, ProviderName, op, err)
	}
}

func (p *Provider) classifyStatus(op string, resp *hcloud.Response, err error) error {
	switch status := resp.StatusCode; {
	case status == http.StatusTooManyRequests:
		return p.rateLimited(op, resp, err)
	case status >= 500:
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return p.refused(op, err)
	case status == http.StatusNotFound:
		return errclass.New(errclass.NotFound, ProviderName, op, err)
	default:
		return errclass.New(errclass.Permanent, ProviderName, op, err)
	}
}

func (p *Provider) refused(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op,
		fmt.Errorf("the token from %s was refused: %w", p.cfg.Credentials, err))
}

func (p *Provider) rateLimited(op string, resp *hcloud.Response, err error) error {
	e := errclass.New(errclass.RateLimited, ProviderName, op, err)
	e.RetryAfter = defaultRateLimitWait
	if resp != nil && resp.Response != nil {
		e.RetryAfter = rateLimitWait(resp, time.Now())
	}
	return e
}

// rateLimitWait prefers Retry-After. Otherwise it uses the documented
// bucket: RateLimit-Limit requests an hour, refilled evenly, so one
// request frees up after an hour / limit; RateLimit-Reset (the bucket is
// full again) bounds that.
func rateLimitWait(resp *hcloud.Response, now time.Time) time.Duration {
	if d, ok := errclass.RetryAfterHeader(resp.Header, now); ok {
		return d
	}
	rl := resp.Meta.Ratelimit
	if rl.Limit <= 0 {
		return defaultRateLimitWait
	}
	wait := max(time.Hour/time.Duration(rl.Limit), time.Second)
	if !rl.Reset.IsZero() {
		wait = min(wait, max(rl.Reset.Sub(now), time.Second))
	}
	return wait.Round(time.Second)
}
