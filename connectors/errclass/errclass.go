// Package errclass is the taxonomy of provider failures (retryable, rate
// limited, insufficient capacity, not found, permanent) that connectors
// classify their SDKs' errors into and activities turn into Temporal error
// types. It is a leaf, so the metering sinks and anything else can classify
// their failures the same way without importing the connectors.
package errclass

import (
	"errors"
	"fmt"
	"time"
)

// Class is how a provider failure should be handled. Activities turn
// the class into a Temporal application error type, so workflows' retry
// policies name these strings as non-retryable.
type Class string

const (
	// Retryable: a transient fault; try again, after RetryAfter if set.
	Retryable Class = "Retryable"
	// RateLimited: the provider throttled us; wait RetryAfter.
	RateLimited Class = "RateLimited"
	// InsufficientCapacity: this size is not available now; sizing falls
	// back to the next size instead of retrying this one.
	InsufficientCapacity Class = "InsufficientCapacity"
	// NotFound: the object does not exist.
	NotFound Class = "NotFound"
	// Permanent: auth, invalid request, quota; retrying cannot help.
	Permanent Class = "Permanent"
)

// NonRetryable are the classes Temporal must not retry.
var NonRetryable = []string{string(InsufficientCapacity), string(NotFound), string(Permanent)}

// Error is the typed error every connector maps its SDK's errors into.
type Error struct {
	Class      Class
	Provider   string
	Op         string
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.Provider, e.Op, e.Class)
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// New builds a classified error.
func New(class Class, provider, op string, err error) *Error {
	return &Error{Class: class, Provider: provider, Op: op, Err: err}
}

// Of returns the class of err, Retryable for unclassified errors:
// an unknown failure is assumed transient, bounded by the retry policy.
func Of(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return Retryable
}

// Classified reports whether err already carries a class: a connector's
// classify passes such an error through rather than guessing again.
func Classified(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// RetryAfterOf returns the provider's retry-after hint, or zero.
func RetryAfterOf(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// IsInsufficientCapacity reports whether err says the size is unavailable.
func IsInsufficientCapacity(err error) bool {
	return Of(err) == InsufficientCapacity && err != nil
}

// IsNotFound reports whether err says the object does not exist.
func IsNotFound(err error) bool { return err != nil && Of(err) == NotFound }

// IsPermanent reports whether err can never succeed on retry.
func IsPermanent(err error) bool { return err != nil && Of(err) == Permanent }
