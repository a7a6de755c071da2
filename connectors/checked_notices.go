package connectors

import (
	"context"
	"errors"
	"fmt"

	"github.com/hanzoai/visor-fleet/types"
)

// Operation names of InterruptionSource.
const (
	OpInterruptions = "Interruptions"
	OpAcknowledge   = "Acknowledge"
)

// checkedNotices is a checked provider that tells of interruptions;
// checkedLeakNotices one that also finds leaks (AWS, the sim).
type checkedNotices struct {
	*checked
	notices InterruptionSource
}

type checkedLeakNotices struct {
	*checkedLeakFinder
	notices InterruptionSource
}

func (c *checkedNotices) Interruptions(ctx context.Context, pool types.PoolKey) ([]Interruption, error) {
	return checkedInterruptions(ctx, c.checked, c.notices, pool)
}

func (c *checkedNotices) Acknowledge(ctx context.Context, pool types.PoolKey, ids []string) error {
	return checkedAcknowledge(ctx, c.checked, c.notices, pool, ids)
}

func (c *checkedLeakNotices) Interruptions(ctx context.Context, pool types.PoolKey) ([]Interruption, error) {
	return checkedInterruptions(ctx, c.checked, c.notices, pool)
}

func (c *checkedLeakNotices) Acknowledge(ctx context.Context, pool types.PoolKey, ids []string) error {
	return checkedAcknowledge(ctx, c.checked, c.notices, pool, ids)
}

func checkedInterruptions(ctx context.Context, c *checked, s InterruptionSource, pool types.PoolKey) ([]Interruption, error) {
	if err := pool.Validate(); err != nil {
		return nil, c.refuse(OpInterruptions, "pool: %w", err)
	}
	return s.Interruptions(ctx, pool)
}

func checkedAcknowledge(ctx context.Context, c *checked, s InterruptionSource, pool types.PoolKey, ids []string) error {
	if err := pool.Validate(); err != nil {
		return c.refuse(OpAcknowledge, "pool: %w", err)
	}
	for i, id := range ids {
		if id == "" {
			return c.refuse(OpAcknowledge, "notice ID [%d] is empty", i)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", OpAcknowledge, err)
	}
	return s.Acknowledge(ctx, pool, ids)
}

// ErrNoInterruptions is what Interruptions answers on a provider that
// could tell of interruptions but was configured without a source (an AWS
// account with no interruption queue named): the pool stops asking.
var ErrNoInterruptions = errors.New("no interruption source is configured for this provider")
