package metering

import "context"

// Sink delivers meter events. Report must be idempotent per event key:
// a repeat of an event already delivered is a no-op, so activities can
// retry a whole batch freely. A nil error means every event is durable.
type Sink interface {
	Report(ctx context.Context, events []Event) error
}
