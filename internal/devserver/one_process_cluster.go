package devserver

import (
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
)

// OneProcessCluster fills in what every single-process Temporal server's
// config shares, whatever its persistence (SQLite here, PostgreSQL in
// testsuite/pgtemporal): one active cluster whose frontend answers on
// frontend, no replication, archival off.
func OneProcessCluster(cfg *config.Config, frontend string) {
	cfg.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        "active",
		CurrentClusterName:       "active",
		ClusterInformation: map[string]cluster.ClusterInformation{
			"active": {Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontend},
		},
	}
	cfg.DCRedirectionPolicy = config.DCRedirectionPolicy{Policy: "noop"}
	cfg.Archival = config.Archival{
		History:    config.HistoryArchival{State: "disabled"},
		Visibility: config.VisibilityArchival{State: "disabled"},
	}
	cfg.NamespaceDefaults = config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
		History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
		Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
	}}
	cfg.PublicClient = config.PublicClient{HostPort: frontend}
}
