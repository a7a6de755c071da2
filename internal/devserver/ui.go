package devserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/labstack/echo/v4"
	uiserver "github.com/temporalio/ui-server/v2/server"
	"github.com/temporalio/ui-server/v2/server/api"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	"google.golang.org/grpc/metadata"

	"github.com/hanzoai/visor-fleet/auth"
)

// uiServer is the Temporal Web UI served from the assets embedded in the
// ui-server module.
type uiServer struct {
	srv   *uiserver.Server
	guard *hostGuard
}

// startUI runs the UI server on an internal loopback port behind a
// hostGuard on the public address (see host_check.go). With a codec
// endpoint the browser decodes payloads through it; with a UI credential
// every call the UI makes to the frontend carries its bearer token.
func startUI(opts Options, frontend, codecEndpoint string) (*uiServer, error) {
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
		CORS:  uiconfig.CORS{CookieInsecure: true},
		Codec: uiconfig.Codec{Endpoint: codecEndpoint},
	}
	uiOpts := []uioptions.ServerOption{uioptions.WithConfigProvider(cfg)}
	if opts.UICredential != nil {
		headers := auth.NewBearerHeaders(*opts.UICredential)
		uiOpts = append(uiOpts, uioptions.WithAPIMiddleware([]api.Middleware{
			func(echo.Context) runtime.ServeMuxOption {
				return runtime.WithMetadata(func(context.Context, *http.Request) metadata.MD {
					h, err := headers.Header()
					if err != nil {
						return nil // the frontend refuses the call and says why in its log
					}
					return metadata.Pairs("authorization", h)
				})
			},
		}))
	}
	s := uiserver.NewServer(uiOpts...)
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
