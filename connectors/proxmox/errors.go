package proxmox

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	pve "github.com/luthermonson/go-proxmox"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// defaultThrottleWait is used when a throttled answer says nothing of when
// to come back.
const defaultThrottleWait = 5 * time.Second

// statusError is an answer go-proxmox would misread: it decodes any
// status but 400, 401, 403, 500 and 501 as success, so a 429 from a proxy
// in front of pveproxy, or pveproxy's own 596 (another node of the cluster
// unreachable), would look like an empty result. statusGuard turns those
// into this error before go-proxmox sees them.
type statusError struct {
	status     string
	code       int
	retryAfter time.Duration
}

func (e *statusError) Error() string { return "proxmox answered " + e.status }

// statusGuard is the client's transport: it fails the answers go-proxmox
// cannot classify (see statusError) and passes everything else on.
type statusGuard struct{ base http.RoundTripper }

func (g statusGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := g.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case res.StatusCode < 300, res.StatusCode == http.StatusBadRequest, res.StatusCode == http.StatusUnauthorized,
		res.StatusCode == http.StatusForbidden, res.StatusCode == http.StatusInternalServerError, res.StatusCode == http.StatusNotImplemented:
		return res, nil
	}
	_ = res.Body.Close()
	e := &statusError{status: res.Status, code: res.StatusCode}
	if d, ok := errclass.RetryAfterHeader(res.Header, time.Now()); ok {
		e.retryAfter = d
	}
	return nil, e
}

// classify maps a go-proxmox failure, or a task's exit status, onto the
// connector error classes. Proxmox answers most failures with status 500
// and the reason in the status line, so the class comes from the reason's
// documented wording. Auth failures name the credential reference, never
// the token.
func (p *Provider) classify(op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	var se *statusError
	switch {
	case errors.As(err, &se):
		switch {
		case se.code == http.StatusTooManyRequests:
			e := errclass.New(errclass.RateLimited, ProviderName, op, err)
			e.RetryAfter = cmp.Or(se.retryAfter, defaultThrottleWait)
			return e
		case se.code == http.StatusNotFound:
			return errclass.New(errclass.NotFound, ProviderName, op, err)
		case se.code >= 500:
			e := errclass.New(errclass.Retryable, ProviderName, op, err)
			e.RetryAfter = se.retryAfter
			return e
		default:
			return errclass.New(errclass.Permanent, ProviderName, op, err)
		}
	case pve.IsNotAuthorized(err):
		return errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("the API token from %s was refused (or lacks the privilege): %w", p.cfg.Credentials, err))
	case pve.IsTimeout(err):
		return errclass.New(errclass.Retryable, ProviderName, op, fmt.Errorf("task still running: %w", err))
	case strings.HasPrefix(err.Error(), "bad request"):
		return errclass.New(errclass.Permanent, ProviderName, op, err)
	}
	return errclass.New(classOfMessage(err.Error()), ProviderName, op, err)
}

// classOfMessage reads Proxmox's error wording (a 500's reason, a task's
// exit status). Unknown wording is Retryable, bounded by the retry policy.
func classOfMessage(msg string) errclass.Class {
	m := strings.ToLower(msg)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(m, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("does not exist", "no such", "not found"):
		return errclass.NotFound
	case has("permission check failed", "quota", "invalid format", "parameter verification"):
		return errclass.Permanent
	case has("not enough", "no space left", "out of memory", "cannot allocate memory", "insufficient"):
		return errclass.InsufficientCapacity
	default: // "can't lock file", "got timeout", a node rebooting, ...
		return errclass.Retryable
	}
}
