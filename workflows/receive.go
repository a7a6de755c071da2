package workflows

import (
	"fmt"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// receiveAsync takes the next signal off ch without blocking and decodes
// it into T. A payload that does not decode is returned as an error, for
// the caller to record and drop: the SDK's typed receive drops it silently
// and, inside a blocking Receive, waits for the next signal instead —
// which stalls a loop on one bad message.
func receiveAsync[T any](ch workflow.ReceiveChannel) (v T, ok bool, err error) {
	var raw converter.RawValue
	if !ch.ReceiveAsync(&raw) {
		return v, false, nil
	}
	return decodeRaw[T](ch.Name(), raw)
}

// receiveEach hands every signal buffered on ch to apply, and each that
// does not decode to reject.
func receiveEach[T any](ch workflow.ReceiveChannel, apply func(T), reject func(error)) {
	for {
		v, ok, err := receiveAsync[T](ch)
		if !ok {
			return
		}
		if err != nil {
			reject(err)
			continue
		}
		apply(v)
	}
}

// receive is receiveAsync for a selector callback, where a value is known
// to be waiting.
func receive[T any](ctx workflow.Context, ch workflow.ReceiveChannel) (v T, err error) {
	var raw converter.RawValue
	ch.Receive(ctx, &raw)
	v, _, err = decodeRaw[T](ch.Name(), raw)
	return v, err
}

func decodeRaw[T any](name string, raw converter.RawValue) (v T, ok bool, err error) {
	if raw.Payload() == nil {
		return v, true, fmt.Errorf("signal %q has no payload", name)
	}
	if err := converter.GetDefaultDataConverter().FromPayload(raw.Payload(), &v); err != nil {
		return v, true, fmt.Errorf("signal %q payload does not decode: %w", name, err)
	}
	return v, true, nil
}
