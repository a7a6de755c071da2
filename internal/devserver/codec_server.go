package devserver

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/hanzoai/visor-fleet/codec"
)

// codecServer serves the payload codec to the Web UI in the browser.
type codecServer struct {
	srv  *http.Server
	addr string
}

// startCodecServer listens on IP:CodecPort and answers only the Web UI's
// origins from a browser.
func startCodecServer(opts Options) (*codecServer, error) {
	addr := net.JoinHostPort(opts.IP, strconv.Itoa(opts.CodecPort))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ui := strconv.Itoa(opts.UIPort)
	origins := []string{"http://" + net.JoinHostPort(opts.IP, ui)}
	if ip := net.ParseIP(opts.IP); ip != nil && ip.IsLoopback() {
		origins = append(origins, "http://localhost:"+ui, "http://127.0.0.1:"+ui)
	}
	srv := &http.Server{
		Handler:           codec.NewHandler(opts.Codec, codec.ServerOptions{AllowedOrigins: origins}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.Serve(l) }() // ends with Shutdown
	return &codecServer{srv: srv, addr: "http://" + addr}, nil
}

func (c *codecServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.srv.Shutdown(ctx)
}

// CodecAddress is the codec server's URL, or "" when there is none.
func (s *Server) CodecAddress() string {
	if s.codec == nil {
		return ""
	}
	return s.codec.addr
}
