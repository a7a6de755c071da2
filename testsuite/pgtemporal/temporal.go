package pgtemporal

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hanzoai/visor-fleet/internal/devserver"
)

// Databases the server uses, and the embedded schema directories (inside
// go.temporal.io/server/schema) the schema tool applies to each.
const (
	persistenceDB     = "temporal"
	visibilityDB      = "temporal_visibility"
	persistenceSchema = "postgresql/v12/temporal"
	visibilitySchema  = "postgresql/v12/visibility"
)

// historyShards is small, as in a dev cluster: each shard is a goroutine
// set and a row; more only cost a laptop CPU.
const historyShards = 4

// SQLConfig is the postgres12 plugin's connection to one database.
func (p *Postgres) SQLConfig(database string) *config.SQL {
	return &config.SQL{
		PluginName:      postgresql.PluginName,
		DatabaseName:    database,
		ConnectAddr:     p.Address(),
		ConnectProtocol: "tcp",
		User:            p.User,
		MaxConns:        20,
		MaxIdleConns:    20,
	}
}

// SetupSchema creates the persistence and visibility databases and brings
// each to the newest schema version, as temporal-sql-tool's create-database,
// setup-schema -v 0.0 and update-schema do.
func SetupSchema(p *Postgres, logger log.Logger) error {
	for db, dir := range map[string]string{persistenceDB: persistenceSchema, visibilityDB: visibilitySchema} {
		cfg := p.SQLConfig(db)
		if err := sqltool.DoCreateDatabase(p.SQLConfig(db), "postgres", logger); err != nil {
			return fmt.Errorf("create database %s: %w", db, err)
		}
		conn, err := sqltool.NewConnection(cfg, logger)
		if err != nil {
			return fmt.Errorf("connect to %s: %w", db, err)
		}
		err = schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger).Run()
		if err == nil {
			err = schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: db, SchemaName: dir}, logger).Run()
		}
		conn.Close()
		if err != nil {
			return fmt.Errorf("schema of %s from %s: %w", db, dir, err)
		}
	}
	return nil
}

// Temporal is a running server on PostgreSQL, in this process.
type Temporal struct {
	Address   string
	Namespace string
	srv       temporal.Server
	stopped   bool
}

// StartTemporal creates the schema on p, starts the server on a free
// loopback port, registers namespace and waits until it answers. The
// server is stopped when the test ends (Stop stops it sooner).
func StartTemporal(t testing.TB, p *Postgres, namespace string) *Temporal {
	t.Helper()
	logger, logPath := fileLogger(t)
	started := time.Now()
	if err := SetupSchema(p, logger); err != nil {
		t.Fatalf("Temporal schema on PostgreSQL: %v", err)
	}
	t.Logf("pgtemporal: schema set up in %s", time.Since(started).Round(time.Millisecond))
	cfg, err := serverConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(cfg),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			dynamicconfig.FrontendEnableUpdateWorkflowExecution.Key():              true,
			dynamicconfig.FrontendEnableUpdateWorkflowExecutionAsyncAccepted.Key(): true,
			// A registered namespace is usable in a second, not ten.
			dynamicconfig.NamespaceCacheRefreshInterval.Key(): time.Second,
		}),
	)
	if err != nil {
		t.Fatalf("create Temporal server: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("start Temporal server: %v", err)
	}
	s := &Temporal{Address: cfg.PublicClient.HostPort, Namespace: namespace, srv: srv}
	t.Cleanup(s.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := s.registerNamespace(ctx); err != nil {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("%v\nserver log tail:\n%s", err, tail(log, 4000))
	}
	t.Logf("pgtemporal: server on %s (PostgreSQL %s) ready in %s", s.Address, p.Address(), time.Since(started).Round(time.Millisecond))
	return s
}

// Stop shuts the server down; PostgreSQL keeps every row.
func (s *Temporal) Stop() {
	if !s.stopped {
		s.stopped = true
		_ = s.srv.Stop()
	}
}

// Dial returns a client of the server's namespace.
func (s *Temporal) Dial() (client.Client, error) {
	return client.Dial(client.Options{HostPort: s.Address, Namespace: s.Namespace, Logger: quietSDKLogger()})
}

// registerNamespace registers the namespace (once the frontend answers)
// and waits until the namespace registry serves it.
func (s *Temporal) registerNamespace(ctx context.Context) error {
	var last error
	registered := false
	for {
		c, err := client.Dial(client.Options{HostPort: s.Address, Namespace: s.Namespace, Logger: quietSDKLogger()})
		if err == nil {
			if !registered {
				_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
					Namespace: s.Namespace, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
				})
				if _, exists := err.(*serviceerror.NamespaceAlreadyExists); exists {
					err = nil
				}
				registered = err == nil
			}
			if err == nil {
				_, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.Namespace})
			}
			if err == nil {
				_, err = c.WorkflowService().ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: s.Namespace, PageSize: 1})
			}
			c.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("Temporal on PostgreSQL at %s: namespace %s not ready: %w", s.Address, s.Namespace, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// serverConfig is a single-process cluster: every service on loopback,
// persistence and visibility in PostgreSQL.
func serverConfig(p *Postgres) (*config.Config, error) {
	ports := make([]int, 8)
	for i := range ports {
		port, err := freeLowPort()
		if err != nil {
			return nil, fmt.Errorf("free port for an internal service: %w", err)
		}
		ports[i] = port
	}
	svc := func(grpc, membership int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: grpc, MembershipPort: membership, BindOnLocalHost: true}}
	}
	frontend := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	const store, visibility = "postgres-default", "postgres-visibility"
	cfg := &config.Config{
		Global: config.Global{Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: "127.0.0.1"}},
		Persistence: config.Persistence{
			DefaultStore:     store,
			VisibilityStore:  visibility,
			NumHistoryShards: historyShards,
			DataStores: map[string]config.DataStore{
				store:      {SQL: p.SQLConfig(persistenceDB)},
				visibility: {SQL: p.SQLConfig(visibilityDB)},
			},
		},
		Services: map[string]config.Service{
			"frontend": svc(ports[0], ports[1]),
			"history":  svc(ports[2], ports[3]),
			"matching": svc(ports[4], ports[5]),
			"worker":   svc(ports[6], ports[7]),
		},
	}
	devserver.OneProcessCluster(cfg, frontend)
	return cfg, nil
}

// fileLogger sends the server's log to a file in the test's temp dir.
func fileLogger(t testing.TB) (log.Logger, string) {
	path := filepath.Join(t.TempDir(), "temporal.log")
	return log.NewZapLogger(log.BuildZapLogger(log.Config{Level: "warn", OutputFile: path})), path
}

func quietSDKLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
