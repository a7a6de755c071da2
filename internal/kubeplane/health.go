package kubeplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// waitHealthy polls url until it answers 200, the process exits, or ctx
// ends. ca verifies the server when given; without it TLS is not verified
// (kube-controller-manager serves a certificate it made itself, and this is
// only a local liveness probe).
func waitHealthy(ctx context.Context, p *process, url string, ca []byte, token string) error {
	tlsConfig := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // see above
	if ca != nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		tlsConfig = &tls.Config{RootCAs: pool}
	}
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsConfig},
	}
	defer client.CloseIdleConnections()
	last := "no answer yet"
	for {
		if err := p.running(); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, failingChecks(string(body)))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy at %s (last: %s): %w", p.name, url, last, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// failingChecks keeps the "[-]check failed" lines of a /readyz answer.
func failingChecks(body string) string {
	var failed []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, line)
		}
	}
	if len(failed) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(failed, "; ")
}
