package cluster

import (
	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// startUI serves the Temporal Web UI (the assets the ui-server module
// embeds) on loopback against the cluster's frontend.
func startUI(l layout) (*uiserver.Server, error) {
	s := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                "127.0.0.1",
		Port:                l.UIPort,
		TemporalGRPCAddress: l.frontend(),
		EnableUI:            true,
		DefaultNamespace:    l.Namespace,
		HideLogs:            true,
		DisableNewsFetch:    true,
		CORS:                uiconfig.CORS{CookieInsecure: true},
	}))
	go func() { _ = s.Start() }()
	return s, nil
}
