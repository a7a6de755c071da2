package connectors

import (
	"errors"
	"fmt"
	"time"
)

// ErrorClass is how a provider failure should be handled. Activities turn
// the class into a Temporal application error type, so workflows' retry
// policies name these strings as non-retryable.
type ErrorClass string

const (
	// Retryable: a transient fault; try again, after RetryAfter if set.
	Retryable ErrorClass = "Retryable"
	// RateLimited: the provider throttled us; wait RetryAfter.
	RateLimited ErrorClass = "RateLimited"
	// InsufficientCapacity: this size is not available now; sizing falls
	// back to the next size instead of retrying this one.
	InsufficientCapacity ErrorClass = "InsufficientCapacity"
	// NotFound: the object does not exist.
	NotFound ErrorClass = "NotFound"
	// Permanent: auth, invalid request, quota; retrying cannot help.
	Permanent ErrorClass = "Permanent"
)

// NonRetryableClasses are the classes Temporal must not retry.
var NonRetryableClasses = []string{string(InsufficientCapacity), string(NotFound), string(Permanent)}

// Error is the typed error every connector maps its SDK's errors into.
type Error struct {
	Class      ErrorClass
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

// NewError builds a classified error.
func NewError(class ErrorClass, provider, op string, err error) *Error {
	return &Error{Class: class, Provider: provider, Op: op, Err: err}
}

// ClassOf returns the class of err, Retryable for unclassified errors:
// an unknown failure is assumed transient, bounded by the retry policy.
func ClassOf(err error) ErrorClass {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return Retryable
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
	return ClassOf(err) == InsufficientCapacity && err != nil
}

// IsNotFound reports whether err says the object does not exist.
func IsNotFound(err error) bool { return err != nil && ClassOf(err) == NotFound }

// IsPermanent reports whether err can never succeed on retry.
func IsPermanent(err error) bool { return err != nil && ClassOf(err) == Permanent }
