package main

import (
	"context"
	"fmt"
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
	if err := checkTLSFlags(o); err != nil {
		return nil, err
	}
	o.Logger, o.MetricsHandler = g.sdkLogger(), metrics
	dialedWithoutCredential = o.Credential == ""
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	return starter.Dial(ctx, o)
}

// checkTLSFlags refuses half a client certificate: a key without its
// certificate (or the reverse) would otherwise be ignored and the
// connection made without the client identity the user meant to present.
func checkTLSFlags(o starter.ConnectOptions) error {
	switch {
	case o.TLSKey != "" && o.TLSCert == "":
		return fmt.Errorf("--tls-key (TEMPORAL_TLS_KEY) %s is given without --tls-cert (TEMPORAL_TLS_CERT): give both for mTLS, or neither", o.TLSKey)
	case o.TLSCert != "" && o.TLSKey == "":
		return fmt.Errorf("--tls-cert (TEMPORAL_TLS_CERT) %s is given without --tls-key (TEMPORAL_TLS_KEY): give both for mTLS, or neither", o.TLSCert)
	}
	return nil
}
