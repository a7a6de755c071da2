package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
)

// dialTimeout bounds connecting, so a wrong --address fails fast instead
// of the SDK retrying for minutes.
const dialTimeout = 15 * time.Second

// dial connects with the global flags, logging through --log-level on
// stderr (the SDK's default logger would write to stdout and spoil -o json)
// and reporting SDK metrics to metrics when it is not nil.
func (g *globalFlags) dial(ctx context.Context, metrics client.MetricsHandler) (client.Client, error) {
	o := g.connectOptions()
	opts, err := o.ClientOptions()
	if err != nil {
		return nil, err
	}
	opts.Logger = g.sdkLogger()
	opts.MetricsHandler = metrics
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", o.Address, o.Namespace, err)
	}
	return c, nil
}
