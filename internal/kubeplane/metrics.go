package kubeplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Metrics reads a component's Prometheus text (/metrics) as AdminUser:
// kube-scheduler's queue gauges (scheduler_pending_pods by queue) and
// attempt counters are what a stalled burst is read from. The component
// serves a self-signed certificate of its own cert-dir, so it is not
// verified; the address is loopback.
func (c *Cluster) Metrics(ctx context.Context, component string) (string, error) {
	url, ok := c.urls[component]
	if !ok {
		return "", fmt.Errorf("kubeplane: no component %q runs", component)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+c.users[AdminUser].Token)
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback, self-signed
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("kubeplane: %s /metrics: %s: %.200s", component, resp.Status, body)
	}
	return string(body), nil
}
