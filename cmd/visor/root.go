package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/hanzoai/visor-fleet/starter"
)

// globalFlags are shared by every command that talks to Temporal.
type globalFlags struct {
	connect  starter.ConnectOptions
	logLevel string
}

func newRootCommand() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "visor",
		Short:         "Visor Fleet: a node autoscaler for many Kubernetes clusters on many providers, on Temporal",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := root.PersistentFlags()
	f.StringVar(&g.connect.Address, "address", "", "Temporal frontend host:port (env TEMPORAL_ADDRESS, default 127.0.0.1:7233)")
	f.StringVar(&g.connect.Namespace, "namespace", "", "Temporal namespace (env TEMPORAL_NAMESPACE, default \"default\")")
	f.StringVar(&g.connect.TLSCert, "tls-cert", "", "client certificate file for mTLS (env TEMPORAL_TLS_CERT)")
	f.StringVar(&g.connect.TLSKey, "tls-key", "", "client key file for mTLS (env TEMPORAL_TLS_KEY)")
	f.StringVar(&g.connect.TLSCA, "tls-ca", "", "server CA file (env TEMPORAL_TLS_CA)")
	f.BoolVar(&g.connect.TLS, "tls", false, "use TLS with the system's roots")
	f.StringVar(&g.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	f.StringVar(&g.connect.Credential, "credential", "", "caller credential reference, file:PATH or env:NAME (env VISOR_CREDENTIAL; default .visor/dev-admin.json when present)")
	f.StringVar(&g.connect.CodecKeys, "codec-keys", "", "payload codec key file reference (env VISOR_CODEC_KEYS; default .visor/codec-keys.json when present)")
	root.AddCommand(newDevCommand(g), newWorkerCommand(g), newPoolCommand(g), newClusterCommand(g), offline(newMeterCommand()),
		newAuthCommand(g), offline(newCodecCommand()), offline(newCodecServerCommand()), offline(newScoreCommand()), offline(newDemoCommand()), offline(newVersionCommand()))
	return root
}

// offline marks a command that never talks to Temporal: its help lists
// only its own flags, not the connection flags every other command shares
// (they are still accepted, and ignored, so scripts that pass them work).
func offline(cmd *cobra.Command) *cobra.Command {
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { f.Hidden = true })
		c.Parent().HelpFunc()(c, args)
	})
	return cmd
}

// contractCmd carries what every pool and cluster subcommand shares: the
// global flags and the -o format.
type contractCmd struct {
	g      *globalFlags
	output string
}

// group is cmd with its subcommands and the -o flag they all read.
func (b *contractCmd) group(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	addOutputFlag(cmd, &b.output)
	cmd.AddCommand(subs...)
	return cmd
}

// connect checks the output format, then dials.
func (b *contractCmd) connect(ctx context.Context) (client.Client, error) {
	if err := checkOutput(b.output); err != nil {
		return nil, err
	}
	return b.g.dial(ctx, nil)
}

func (g *globalFlags) connectOptions() starter.ConnectOptions {
	return withDevDefaults(g.connect.FromEnv())
}

func (g *globalFlags) logger() *slog.Logger {
	var level slog.Level
	switch strings.ToLower(g.logLevel) {
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "error":
		level = slog.LevelError
	default:
		level = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

func (g *globalFlags) sdkLogger() sdklog.Logger { return sdklog.NewStructuredLogger(g.logger()) }
