package devserver

import (
	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// uiServer is the Temporal Web UI served from the assets embedded in the
// ui-server module.
type uiServer struct{ srv *uiserver.Server }

func startUI(opts Options, frontend string) *uiServer {
	cfg := &uiconfig.Config{
		Host:                opts.IP,
		Port:                opts.UIPort,
		TemporalGRPCAddress: frontend,
		EnableUI:            true,
		DefaultNamespace:    opts.Namespace,
		HideLogs:            true,
		DisableNewsFetch:    true,
		// Plain HTTP on loopback: the CSRF cookie must not demand HTTPS.
		CORS: uiconfig.CORS{CookieInsecure: true},
	}
	s := uiserver.NewServer(uioptions.WithConfigProvider(cfg))
	// Start blocks until Stop; the port was checked free beforehand.
	go func() { _ = s.Start() }()
	return &uiServer{srv: s}
}

func (u *uiServer) stop() { u.srv.Stop() }
