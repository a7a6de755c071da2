package devserver

import (
	"fmt"
	"net"
	"strconv"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// uiServer is the Temporal Web UI served from the assets embedded in the
// ui-server module.
type uiServer struct {
	srv   *uiserver.Server
	guard *hostGuard
}

// startUI runs the UI server on an internal loopback port behind a
// hostGuard on the public address (see host_check.go).
func startUI(opts Options, frontend string) (*uiServer, error) {
	internalPort, err := freePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	cfg := &uiconfig.Config{
		Host:                "127.0.0.1",
		Port:                internalPort,
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
	guard, err := startHostGuard(opts.IP, opts.UIPort, net.JoinHostPort("127.0.0.1", strconv.Itoa(internalPort)))
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("Web UI on %s:%d: %w", opts.IP, opts.UIPort, err)
	}
	return &uiServer{srv: s, guard: guard}, nil
}

func (u *uiServer) stop() {
	u.guard.stop()
	u.srv.Stop()
}
