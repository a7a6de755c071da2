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
	ports, err := FreeServicePorts(temporal.DefaultServices)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ServerConfig(p, ports)
	srv, err := temporal.NewServer(
		temporal.WithConfig(cfg),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(DynamicConfig()),
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
	if err := RegisterNamespace(ctx, s.Address, s.Namespace); err != nil {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("%v\nserver log tail:\n%s", err, tail(log, 4000))
	}
	t.Logf("pgtemporal: server on %s (PostgreSQL %s) ready in %s", s.Address, p.Address(), time.Since(started).Round(time.Millisecond))
	return s
}

// DynamicConfig is what every process of the server runs with.
func DynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		dynamicconfig.FrontendEnableUpdateWorkflowExecution.Key():              true,
		dynamicconfig.FrontendEnableUpdateWorkflowExecutionAsyncAccepted.Key(): true,
		// A registered namespace is usable in a second, not ten.
		dynamicconfig.NamespaceCacheRefreshInterval.Key(): time.Second,
	}
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

// RegisterNamespace registers namespace on the frontend at address (once
// it answers) and waits until the namespace registry serves it.
func RegisterNamespace(ctx context.Context, address, namespace string) error {
	var last error
	registered := false
	for {
		c, err := client.Dial(client.Options{HostPort: address, Namespace: namespace, Logger: quietSDKLogger()})
		if err == nil {
			if !registered {
				_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
					Namespace: namespace, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
				})
				if _, exists := err.(*serviceerror.NamespaceAlreadyExists); exists {
					err = nil
				}
				registered = err == nil
			}
			if err == nil {
				_, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
			}
			if err == nil {
				_, err = c.WorkflowService().ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: namespace, PageSize: 1})
			}
			c.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("Temporal on PostgreSQL at %s: namespace %s not ready: %w", address, namespace, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ServicePorts are each service's gRPC and membership port.
type ServicePorts map[string]struct{ GRPC, Membership int }

// FreeServicePorts draws two free loopback ports for each service.
func FreeServicePorts(services []string) (ServicePorts, error) {
	out := ServicePorts{}
	for _, svc := range services {
		grpc, err := freeLowPort()
		if err == nil {
			var membership int
			membership, err = freeLowPort()
			out[svc] = struct{ GRPC, Membership int }{grpc, membership}
		}
		if err != nil {
			return nil, fmt.Errorf("free port for the %s service: %w", svc, err)
		}
	}
	return out, nil
}

// ServerConfig is a cluster whose services listen on loopback at ports,
// persistence and visibility in PostgreSQL. Every process of a
// multi-process cluster builds the same config and runs its own services
// of it; they find each other through the membership rows in PostgreSQL.
func ServerConfig(p *Postgres, ports ServicePorts) *config.Config {
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
		Services: map[string]config.Service{},
	}
	for svc, port := range ports {
		cfg.Services[svc] = config.Service{RPC: config.RPC{GRPCPort: port.GRPC, MembershipPort: port.Membership, BindOnLocalHost: true}}
	}
	devserver.OneProcessCluster(cfg, net.JoinHostPort("127.0.0.1", strconv.Itoa(ports["frontend"].GRPC)))
	return cfg
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
