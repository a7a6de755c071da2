package errclass

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestClassesSurviveWrapping(t *testing.T) {
	cause := errors.New("no m6i.large in eu-west-1a")
	e := New(InsufficientCapacity, "aws", "CreateNodeGroup", cause)
	wrapped := fmt.Errorf("plan: %w", e)
	if Of(wrapped) != InsufficientCapacity || !IsInsufficientCapacity(wrapped) || IsPermanent(wrapped) || IsNotFound(wrapped) {
		t.Fatalf("class lost through wrapping: %v", Of(wrapped))
	}
	if !errors.Is(wrapped, cause) {
		t.Fatal("the provider's own error is not reachable")
	}
	if got, want := e.Error(), "aws CreateNodeGroup: InsufficientCapacity: no m6i.large in eu-west-1a"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestUnclassifiedIsRetryableAndNilIsNothing(t *testing.T) {
	if Of(errors.New("connection reset")) != Retryable {
		t.Fatal("an unknown failure must be assumed transient")
	}
	if IsPermanent(nil) || IsNotFound(nil) || IsInsufficientCapacity(nil) {
		t.Fatal("nil is no class")
	}
	if RetryAfterOf(errors.New("x")) != 0 {
		t.Fatal("retry-after of an unclassified error")
	}
}

func TestRetryAfterIsReportedAndPrinted(t *testing.T) {
	e := &Error{Class: RateLimited, Provider: "hetzner", Op: "SetTargetSize", RetryAfter: 30 * time.Second}
	if RetryAfterOf(fmt.Errorf("x: %w", e)) != 30*time.Second {
		t.Fatal("retry-after hint lost")
	}
	if got, want := e.Error(), "hetzner SetTargetSize: RateLimited (retry after 30s)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestNonRetryableAreTheClassesRetriesCannotFix(t *testing.T) {
	want := []string{string(InsufficientCapacity), string(NotFound), string(Permanent)}
	if !slices.Equal(NonRetryable, want) {
		t.Fatalf("NonRetryable = %v, want %v", NonRetryable, want)
	}
}

func TestClassifiedSeesThroughWrapping(t *testing.T) {
	if Classified(nil) || Classified(errors.New("x")) {
		t.Fatal("an unclassified error is not classified")
	}
	if !Classified(fmt.Errorf("ctx: %w", New(NotFound, "p", "op", nil))) {
		t.Fatal("a wrapped classified error is classified")
	}
}
