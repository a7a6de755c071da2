// Package starter holds the client operations the CLI and other services
// use: connect, register search attributes, enroll clusters, apply pools,
// and the pool contract's updates, signals and queries.
package starter

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/contract"
)

// ConnectOptions say where Temporal is. Empty fields fall back to the usual
// TEMPORAL_* environment variables, then to the embedded default.
type ConnectOptions struct {
	Address   string
	Namespace string
	TLSCert   string // client certificate file (mTLS)
	TLSKey    string
	TLSCA     string // server CA file
	TLS       bool   // TLS with system roots
	APIKey    string // Temporal Cloud API key
	// Logger receives the SDK's logs; nil means warnings and errors on
	// stderr (the SDK's own default writes to stdout, where a caller's
	// output goes).
	Logger sdklog.Logger
	// MetricsHandler receives the SDK's metrics; nil means none.
	MetricsHandler client.MetricsHandler
	// Credential references the caller's credential file (file:/path or
	// env:NAME; see package auth). With one, every call carries a bearer
	// token and every mutating request is signed.
	Credential string
	// CodecKeys references the payload encryption keys (file:/path or
	// env:NAME; see package codec). With them, payloads are encrypted
	// before they leave the process.
	CodecKeys string
}

// FromEnv fills empty fields from TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_CA, TEMPORAL_API_KEY,
// VISOR_CREDENTIAL and VISOR_CODEC_KEYS.
func (o ConnectOptions) FromEnv() ConnectOptions {
	set := func(v *string, env string) {
		if *v == "" {
			*v = os.Getenv(env)
		}
	}
	set(&o.Address, "TEMPORAL_ADDRESS")
	set(&o.Namespace, "TEMPORAL_NAMESPACE")
	set(&o.TLSCert, "TEMPORAL_TLS_CERT")
	set(&o.TLSKey, "TEMPORAL_TLS_KEY")
	set(&o.TLSCA, "TEMPORAL_TLS_CA")
	set(&o.APIKey, "TEMPORAL_API_KEY")
	set(&o.Credential, "VISOR_CREDENTIAL")
	set(&o.CodecKeys, "VISOR_CODEC_KEYS")
	if o.Address == "" {
		o.Address = "127.0.0.1:7233"
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	return o
}

// ClientOptions builds the SDK's options, loading TLS material.
func (o ConnectOptions) ClientOptions() (client.Options, error) {
	opts := client.Options{HostPort: o.Address, Namespace: o.Namespace, Logger: o.Logger, MetricsHandler: o.MetricsHandler}
	if opts.Logger == nil {
		opts.Logger = sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	}
	if o.TLS || o.TLSCert != "" || o.TLSCA != "" || o.APIKey != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.TLSCert != "" || o.TLSKey != "" {
			cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
			if err != nil {
				return opts, fmt.Errorf("TLS client certificate %s / key %s: %w", o.TLSCert, o.TLSKey, err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		if o.TLSCA != "" {
			pem, err := os.ReadFile(o.TLSCA)
			if err != nil {
				return opts, fmt.Errorf("TLS CA %s: %w", o.TLSCA, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return opts, fmt.Errorf("TLS CA %s holds no PEM certificate", o.TLSCA)
			}
			cfg.RootCAs = pool
		}
		opts.ConnectionOptions.TLS = cfg
	}
	if o.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(o.APIKey)
	}
	if o.Credential != "" {
		if o.APIKey != "" {
			return opts, errors.New("a Visor credential and a Temporal API key both set the authorization header: pick one")
		}
		cred, err := auth.LoadCredential(o.Credential)
		if err != nil {
			return opts, fmt.Errorf("credential: %w", err)
		}
		opts.HeadersProvider = auth.NewBearerHeaders(cred)
	}
	if o.CodecKeys != "" {
		keys, err := codec.LoadKeys(o.CodecKeys)
		if err != nil {
			return opts, fmt.Errorf("codec keys: %w", err)
		}
		opts.DataConverter = codec.NewDataConverter(keys)
	} else {
		opts.DataConverter = converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codec.NoKeys{})
	}
	return opts, nil
}

// Dial connects and checks the namespace answers, so a wrong address is a
// clear error at once rather than a hang later.
func Dial(ctx context.Context, o ConnectOptions) (client.Client, error) {
	opts, err := o.ClientOptions()
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", o.Address, o.Namespace, err)
	}
	if b, ok := opts.HeadersProvider.(*auth.BearerHeaders); ok {
		return WithCredential(c, b.Credential()), nil
	}
	return c, nil
}

// EnsureSearchAttributes registers the search attributes of docs/design.md on
// the namespace and waits until the server lists them. Existing ones are
// left alone.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	op := c.OperatorService()
	want := SearchAttributeTypes()
	missing := func() (map[string]enumspb.IndexedValueType, error) {
		resp, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
		if err != nil {
			return nil, fmt.Errorf("list search attributes: %w", err)
		}
		out := map[string]enumspb.IndexedValueType{}
		for name, kind := range want {
			have, ok := resp.CustomAttributes[name]
			if !ok {
				out[name] = kind
			} else if have != kind {
				return nil, fmt.Errorf("search attribute %s exists as %s, want %s", name, have, kind)
			}
		}
		return out, nil
	}
	add, err := missing()
	if err != nil || len(add) == 0 {
		return err
	}
	if _, err := op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: add}); err != nil {
		return fmt.Errorf("add search attributes: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		left, err := missing()
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("search attributes were added but are still not listed after 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// SearchAttributeTypes is the attribute set as the server's enum, for the
// embedded server's namespace creation.
func SearchAttributeTypes() map[string]enumspb.IndexedValueType {
	out := map[string]enumspb.IndexedValueType{}
	for name, kind := range contract.SearchAttributes {
		switch kind {
		case contract.Keyword:
			out[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
		case contract.Int:
			out[name] = enumspb.INDEXED_VALUE_TYPE_INT
		case contract.Datetime:
			out[name] = enumspb.INDEXED_VALUE_TYPE_DATETIME
		}
	}
	return out
}
