package main

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/starter"
)

// dialTimeout bounds connecting, so a wrong --address fails fast instead
// of the SDK retrying for minutes.
const dialTimeout = 15 * time.Second

// dial connects with the global flags, logging through --log-level on
// stderr (the SDK's default logger would write to stdout and spoil -o json)
// and reporting SDK metrics to metrics when it is not nil.
func (g *globalFlags) dial(ctx context.Context, metrics client.MetricsHandler) (client.Client, error) {
	o := g.connectOptions()
	o.Logger, o.MetricsHandler = g.sdkLogger(), metrics
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	return starter.Dial(ctx, o)
}
