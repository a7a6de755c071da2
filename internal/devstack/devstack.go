// Package devstack starts the embedded default as one unit: Temporal server
// (SQLite) and Web UI, simulated fleet, meter ledger and worker, with the
// spec's clusters enrolled and pools applied. `visor dev` and the end-to-end
// tests both stand on it.
package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/internal/devserver"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
	"github.com/hanzoai/visor-fleet/workflows"
)

// Options configure the stack.
type Options struct {
	Server         devserver.Options
	Spec           starter.SpecFile
	SimTick        time.Duration
	ProvisionDelay time.Duration
	Logger         *slog.Logger
	// MetricsHandler, when set, receives the SDK's and the pools' metrics.
	MetricsHandler client.MetricsHandler
	// Clusters are served besides the spec's simulated ones (a kwok
	// cluster on a real control plane); each must be declared in the
	// spec's clusters, so it is enrolled.
	Clusters workers.StaticClusters
}

// Stack is a running embedded system.
type Stack struct {
	Server   *devserver.Server
	Client   client.Client
	Fleet    *devfleet.Fleet
	Ledger   *meterledger.Ledger
	Worker   worker.Worker
	StateDir string
	// Identity is the dev issuer's trust, the worker's and UI's
	// credentials and the codec keys; the admin's credential is at
	// Identity.AdminPath.
	Identity Identity

	stopSim context.CancelFunc
	tempDir string
	quiet   *quietStop
}

// Start brings everything up and registers the spec.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if opts.SimTick <= 0 {
		opts.SimTick = time.Second
	}
	s := &Stack{StateDir: opts.Server.DataDir}
	s.quiet = newQuietStop(opts.Logger.Handler())
	opts.Logger = slog.New(s.quiet)
	if s.StateDir == "" {
		s.StateDir = ".visor"
	}
	if opts.Server.Memory {
		dir, err := os.MkdirTemp("", "visor-dev-")
		if err != nil {
			return nil, err
		}
		s.StateDir, s.tempDir = dir, dir
	}
	if err := os.MkdirAll(s.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", s.StateDir, err)
	}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	var err error
	if s.Identity, err = EnsureIdentity(s.StateDir, time.Now()); err != nil {
		return nil, fmt.Errorf("dev identity in %s: %w", s.StateDir, err)
	}
	pc, err := codec.NewPayloadCodec(s.Identity.CodecKeys)
	if err != nil {
		return nil, err
	}
	so := opts.Server
	so.SearchAttributes = starter.SearchAttributeTypes()
	so.OrgLimits = types.OrgsByName(opts.Spec.Orgs)
	so.Trust, so.Credential, so.UICredential, so.Codec = &s.Identity.Trust, &s.Identity.Worker, &s.Identity.UI, pc
	if so.LogFile == "" {
		so.LogFile = filepath.Join(s.StateDir, "temporal.log")
	}
	if s.Server, err = devserver.Start(ctx, so); err != nil {
		return nil, err
	}
	// The worker's own client: its bearer token passes the frontend, its
	// credential (every org) signs what it sends, its codec encrypts.
	s.Client, err = starter.Dial(ctx, starter.ConnectOptions{
		Address: s.Server.Address(), Namespace: s.Server.Namespace(),
		Credential: s.Identity.WorkerRef, CodecKeys: s.Identity.CodecKeysRef,
		Logger: sdklog.NewStructuredLogger(opts.Logger), MetricsHandler: opts.MetricsHandler,
	})
	if err != nil {
		return nil, err
	}
	tokenDir := filepath.Join(s.StateDir, "tokens")
	if s.Fleet, err = devfleet.New(opts.Spec, devfleet.Options{StateDir: s.StateDir, ProvisionDelay: opts.ProvisionDelay, Logger: opts.Logger, TokenDir: tokenDir}); err != nil {
		return nil, err
	}
	for id, c := range opts.Clusters {
		if _, clash := s.Fleet.Clusters[id]; clash {
			return nil, fmt.Errorf("cluster %s is both simulated and given in Options.Clusters", id)
		}
		c.EnrollmentToken = connectors.CredentialRef("file:" + devfleet.TokenPath(tokenDir, id))
		s.Fleet.Clusters[id] = c
	}
	if s.Ledger, err = meterledger.Open(filepath.Join(s.StateDir, "meter.db")); err != nil {
		return nil, err
	}
	acts := &activities.Activities{Clusters: s.Fleet.Clusters, Temporal: s.Client, Meter: s.Ledger, SystemKey: &s.Identity.SystemKey, TrustKeys: &s.Identity.Trust,
		OrgLimits: types.OrgsByName(opts.Spec.Orgs), Payloads: codec.NewDataConverter(s.Identity.CodecKeys)}
	// A history a newer release wrote would fail this binary's workflow
	// tasks over and over: refuse before the worker takes any.
	if err := workers.CheckDowngrade(ctx, s.Client, s.Server.Namespace(), workflows.Changes); err != nil {
		return nil, err
	}
	s.Worker = workers.New(s.Client, contract.DefaultTaskQueue, acts, worker.Options{})
	if err := s.Worker.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	simCtx, stopSim := context.WithCancel(context.Background())
	s.stopSim = stopSim
	s.Fleet.Run(simCtx, opts.SimTick)
	if err := Register(ctx, s.Client, s.Server.Namespace(), opts.Spec, tokenDir); err != nil {
		return nil, err
	}
	if err := devserver.RestrictPermissions(s.StateDir); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// Register enrolls the spec's clusters and applies its pools; both are
// idempotent, so a restart changes nothing that is already running but a
// cluster enrolled before cluster workflows ran ahead of their pools,
// which gets that priority. Each cluster's enrollment token is kept in
// tokenDir (mode 0600) for the watcher; a cluster whose token file is
// gone gets a fresh token.
func Register(ctx context.Context, c client.Client, namespace string, spec starter.SpecFile, tokenDir string) error {
	if err := os.MkdirAll(tokenDir, 0o700); err != nil {
		return err
	}
	for _, d := range spec.Clusters {
		token, created, err := starter.EnrollCluster(ctx, c, d, "")
		if err != nil {
			return err
		}
		if !created {
			if _, err := starter.RaiseClusterPriority(ctx, c, namespace, d.ID, "visor-dev"); err != nil {
				return err
			}
		}
		path := devfleet.TokenPath(tokenDir, d.ID)
		if token == "" {
			if _, err := os.Stat(path); err == nil {
				continue
			}
			if token, _, err = starter.RotateClusterToken(ctx, c, d.ID, "visor dev lost its token file", "visor-dev"); err != nil {
				return err
			}
		}
		if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
			return err
		}
	}
	for _, p := range spec.Pools {
		if _, err := starter.ApplySpecPool(ctx, c, p, ""); err != nil {
			return err
		}
	}
	return nil
}

// Stop saves the fleet and shuts everything down, in reverse order.
func (s *Stack) Stop() error {
	var saveErr error
	if s.quiet != nil {
		s.quiet.stopping.Store(true)
	}
	if s.stopSim != nil {
		s.stopSim()
	}
	if s.Fleet != nil {
		saveErr = s.Fleet.Save()
	}
	if s.Worker != nil {
		s.Worker.Stop()
	}
	if s.Ledger != nil {
		_ = s.Ledger.Close()
	}
	if s.Client != nil {
		s.Client.Close()
	}
	if s.Server != nil {
		_ = s.Server.Stop()
	}
	if s.tempDir != "" {
		_ = os.RemoveAll(s.tempDir)
	}
	return saveErr
}
