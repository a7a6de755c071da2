// Package devserver runs the embedded default: a Temporal server with SQLite
// persistence and the Temporal Web UI, in this process. It is what `visor dev`
// stands on; production points workers at a real Temporal cluster instead.
package devserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/auth/frontend"
	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/types"
)

// internalFrontend is the server's loopback-only frontend for its own
// system worker when the public one authorizes callers.
const internalFrontend = "internal-frontend"

// Options configure the embedded server.
type Options struct {
	// DataDir holds the SQLite file; ignored with Memory.
	DataDir string
	// Memory keeps everything in memory: throwaway state.
	Memory    bool
	IP        string // listen address, 127.0.0.1 by default
	GRPCPort  int    // frontend gRPC, 7233 by default
	UIPort    int    // Web UI, 8233 by default; negative disables the UI
	Namespace string // registered at start, "default" by default
	// SearchAttributes are registered on the namespace when it is created.
	SearchAttributes map[string]enumspb.IndexedValueType
	// LogLevel of the server's own log (debug, info, warn, error).
	LogLevel string
	// LogFile receives the server's log; empty means stderr.
	LogFile string
	// Trust, when set, makes the frontend refuse every call without a
	// valid Visor bearer token (see claimMapper).
	Trust *auth.Trust
	// Credential is what the server's own readiness check calls with;
	// required with Trust.
	Credential *auth.Credential
	// UICredential is what the Web UI calls the frontend with (subject
	// UISubject: read-only); required with Trust and a UI.
	UICredential *auth.Credential
	// Codec, when set with the Web UI, is served as a codec server on
	// CodecPort and the UI decodes payloads through it.
	Codec     *codec.PayloadCodec
	CodecPort int // 8234 by default
	// OrgLimits are the platform's limits per org (the clusters file's
	// orgs:); the authorizer enforces their quotas on tenant callers.
	OrgLimits map[string]types.OrgPolicy
	// TenantQuota binds the orgs OrgLimits names no quota for;
	// frontend.DefaultQuota when zero.
	TenantQuota frontend.Quota
}

func (o Options) tenantQuota() frontend.Quota {
	if o.TenantQuota == (frontend.Quota{}) {
		return frontend.DefaultQuota
	}
	return o.TenantQuota
}

func (o *Options) defaults() {
	if o.IP == "" {
		o.IP = "127.0.0.1"
	}
	if o.GRPCPort == 0 {
		o.GRPCPort = 7233
	}
	if o.UIPort == 0 {
		o.UIPort = 8233
	}
	if o.CodecPort == 0 {
		o.CodecPort = 8234
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.LogLevel == "" {
		o.LogLevel = "warn"
	}
	if o.DataDir == "" {
		o.DataDir = ".visor"
	}
}

// Server is a running embedded Temporal server (and Web UI).
type Server struct {
	opts     Options
	temporal temporal.Server
	ui       *uiServer
	codec    *codecServer
	lock     *os.File
}

// Address is the frontend's host:port for clients.
func (s *Server) Address() string {
	return net.JoinHostPort(s.opts.IP, strconv.Itoa(s.opts.GRPCPort))
}

// UIAddress is the Web UI's URL, or "" when disabled.
func (s *Server) UIAddress() string {
	if s.ui == nil {
		return ""
	}
	return "http://" + net.JoinHostPort(s.opts.IP, strconv.Itoa(s.opts.UIPort))
}

// Namespace is the namespace the server registered.
func (s *Server) Namespace() string { return s.opts.Namespace }

// Start brings the server up and waits until the namespace answers.
func Start(ctx context.Context, opts Options) (*Server, error) {
	opts.defaults()
	// Check the well-known ports first: the server and UI would otherwise
	// fail deep inside with a log line or os.Exit instead of an error.
	if err := checkPortFree(opts.IP, opts.GRPCPort, "gRPC (--grpc-port)"); err != nil {
		return nil, err
	}
	if opts.UIPort > 0 {
		if err := checkPortFree(opts.IP, opts.UIPort, "Web UI (--ui-port)"); err != nil {
			return nil, err
		}
	}
	if opts.Codec != nil && opts.UIPort > 0 {
		if err := checkPortFree(opts.IP, opts.CodecPort, "codec server (--codec-port)"); err != nil {
			return nil, err
		}
	}
	if opts.Trust != nil && (opts.Credential == nil || (opts.UIPort > 0 && opts.UICredential == nil)) {
		return nil, errors.New("devserver: with Trust the server needs Credential (and UICredential for the Web UI)")
	}
	cfg, sqlCfg, visCfg, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	var lock *os.File
	if !opts.Memory {
		if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("data directory %s: %w", opts.DataDir, err)
		}
		if lock, err = lockDataDir(opts.DataDir); err != nil {
			return nil, err
		}
		if _, err := os.Stat(sqlCfg.DatabaseName); err == nil {
			if err := forgetMembership(sqlCfg.DatabaseName); err != nil {
				lock.Close()
				return nil, err
			}
		}
		stores := []*config.SQL{sqlCfg}
		if visCfg != nil {
			stores = append(stores, visCfg)
		}
		if err := prepareFiles(stores...); err != nil {
			lock.Close()
			return nil, err
		}
	}
	started := false
	defer func() {
		if !started && lock != nil {
			lock.Close()
		}
	}()
	ns, err := sqliteschema.NewNamespaceConfig(cfg.ClusterMetadata.CurrentClusterName, opts.Namespace, false, opts.SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", opts.Namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(sqlCfg, ns); err != nil {
		return nil, fmt.Errorf("register namespace %s: %w", opts.Namespace, err)
	}

	logger, err := newLogger(opts)
	if err != nil {
		return nil, err
	}
	services := temporal.DefaultServices
	if opts.Trust != nil {
		services = append(slices.Clone(services), internalFrontend)
	}
	srv, err := temporal.NewServer(append([]temporal.ServerOption{
		temporal.WithConfig(cfg),
		temporal.ForServices(services),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(dynamicConfig()),
	}, authServerOptions(opts)...)...)
	if err != nil {
		return nil, fmt.Errorf("create Temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start Temporal server: %w", err)
	}
	s := &Server{opts: opts, temporal: srv, lock: lock}
	if err := s.waitReady(ctx); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	started = true
	if !opts.Memory {
		if err := RestrictPermissions(opts.DataDir); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	if opts.Codec != nil && opts.UIPort > 0 {
		if s.codec, err = startCodecServer(opts); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	if opts.UIPort > 0 {
		if s.ui, err = startUI(opts, s.Address(), s.CodecAddress()); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// Stop shuts the UI and the server down.
func (s *Server) Stop() error {
	if s.ui != nil {
		s.ui.stop()
	}
	if s.codec != nil {
		s.codec.stop()
	}
	err := s.temporal.Stop()
	if s.lock != nil {
		s.lock.Close()
	}
	return err
}

// waitReady polls until the namespace is describable: the frontend is up
// and the namespace registry has loaded it.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var lastErr error
	for {
		o := client.Options{HostPort: s.Address(), Namespace: s.opts.Namespace, Logger: quietLogger{}}
		if s.opts.Credential != nil {
			o.HeadersProvider = auth.NewBearerHeaders(*s.opts.Credential)
		}
		c, err := client.Dial(o)
		if err == nil {
			_, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.opts.Namespace})
			c.Close()
			if err == nil {
				return nil
			}
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("Temporal server at %s did not become ready: %w", s.Address(), lastErr)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func checkPortFree(ip string, port int, what string) error {
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s port %s is not available (%v); is another visor dev or Temporal server running? pick another port with the flag", what, addr, err)
	}
	return l.Close()
}

func buildConfig(opts Options) (cfg *config.Config, main, visibility *config.SQL, err error) {
	if opts.Memory {
		main = &config.SQL{
			PluginName:   sqliteplugin.PluginName,
			DatabaseName: fmt.Sprintf("visor-%d", time.Now().UnixNano()),
			ConnectAttributes: map[string]string{
				"mode":  "memory",
				"cache": "shared",
			},
		}
	} else {
		main = fileStore(opts.DataDir, mainDatabase)
		separate, err := separateVisibility(opts.DataDir)
		if err != nil {
			return nil, nil, nil, err
		}
		if separate {
			visibility = fileStore(opts.DataDir, visibilityDatabase)
		}
	}
	// Each internal service needs its own gRPC and membership port; only the
	// frontend's is fixed.
	ports := make([]int, 0, 10)
	for range 10 {
		p, err := freePort(opts.IP)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("find a free port for an internal service: %w", err)
		}
		ports = append(ports, p)
	}
	svc := func(grpc, membership int, frontend bool) config.Service {
		rpc := config.RPC{GRPCPort: grpc, MembershipPort: membership, BindOnIP: opts.IP}
		if !frontend {
			rpc.BindOnIP, rpc.BindOnLocalHost = "", true
		}
		return config.Service{RPC: rpc}
	}
	frontend := net.JoinHostPort(opts.IP, strconv.Itoa(opts.GRPCPort))
	cfg = &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: "127.0.0.1"},
			Metrics:    &metrics.Config{Prometheus: &metrics.PrometheusConfig{ListenAddress: net.JoinHostPort(opts.IP, strconv.Itoa(ports[7])), HandlerPath: "/metrics"}},
		},
		Persistence: config.Persistence{
			DefaultStore:     sqliteplugin.PluginName,
			VisibilityStore:  sqliteplugin.PluginName,
			NumHistoryShards: 1,
			DataStores:       map[string]config.DataStore{sqliteplugin.PluginName: {SQL: main}},
		},
		Services: map[string]config.Service{
			"frontend": svc(opts.GRPCPort, ports[0], true),
			"history":  svc(ports[1], ports[2], false),
			"matching": svc(ports[3], ports[4], false),
			"worker":   svc(ports[5], ports[6], false),
		},
	}
	if visibility != nil {
		cfg.Persistence.VisibilityStore = visibilityStore
		cfg.Persistence.DataStores[visibilityStore] = config.DataStore{SQL: visibility}
	}
	OneProcessCluster(cfg, frontend)
	if opts.Trust != nil {
		// The system worker reaches the server through an internal frontend
		// on loopback (found by membership), not the authorizing public one.
		cfg.Services[internalFrontend] = svc(ports[8], ports[9], false)
		cfg.PublicClient = config.PublicClient{}
	}
	return cfg, main, visibility, nil
}

// dynamicConfig tunes the single-process server for a laptop.
func dynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// The Web UI lists pools by their search attributes.
		dynamicconfig.FrontendEnableUpdateWorkflowExecution.Key():              true,
		dynamicconfig.FrontendEnableUpdateWorkflowExecutionAsyncAccepted.Key(): true,
	}
}

func newLogger(opts Options) (log.Logger, error) {
	lc := log.Config{Level: opts.LogLevel}
	if opts.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(opts.LogFile), 0o700); err != nil {
			return nil, err
		}
		// Created 0600 here; the logger appends to it and keeps the mode.
		f, err := os.OpenFile(opts.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		f.Close()
		// Only a regular file is made private: a log sent to /dev/null (as
		// the benchmarks do) must not have its device's mode changed.
		if fi, err := os.Stat(opts.LogFile); err == nil && fi.Mode().IsRegular() {
			if err := os.Chmod(opts.LogFile, 0o600); err != nil {
				return nil, err
			}
		}
		lc.OutputFile = opts.LogFile
	}
	return log.NewZapLogger(log.BuildZapLogger(lc)), nil
}
