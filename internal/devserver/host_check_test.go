package devserver

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The guard forwards requests for its own address and refuses any other
// Host (DNS rebinding), before the request reaches the UI.
func TestWebUIRefusesAForeignHost(t *testing.T) {
	reached := 0
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		_, _ = io.WriteString(w, "ui for "+r.Host)
	}))
	defer backend.Close()
	port := freeTestPort(t)
	g, err := startHostGuard("127.0.0.1", port, strings.TrimPrefix(backend.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.stop()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	get := func(host string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/namespaces/default/workflows", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, host := range []string{addr, "localhost:" + strconv.Itoa(port), "LOCALHOST:" + strconv.Itoa(port)} {
		if code, body := get(host); code != http.StatusOK || body != "ui for "+host {
			t.Fatalf("Host %s: %d %q", host, code, body)
		}
	}
	before := reached
	for _, host := range []string{"evil.example:" + strconv.Itoa(port), "127.0.0.1:1", "127.0.0.1", "evil.example"} {
		code, body := get(host)
		if code != http.StatusMisdirectedRequest || !strings.Contains(body, "is not the address this Web UI serves") {
			t.Fatalf("Host %s: %d %q, want 421", host, code, body)
		}
	}
	if reached != before {
		t.Fatal("a refused request reached the UI")
	}
}

func TestListenBeyondLoopbackNeedsAuthentication(t *testing.T) {
	for _, ip := range []string{"127.0.0.1", "::1", "localhost", "127.0.0.2"} {
		if err := CheckListenIP(ip, false); err != nil {
			t.Fatalf("%s: %v", ip, err)
		}
	}
	for _, ip := range []string{"0.0.0.0", "192.168.1.5", "::"} {
		err := CheckListenIP(ip, false)
		if err == nil || !strings.Contains(err.Error(), "does not authenticate its callers") || !strings.Contains(err.Error(), "--ip "+ip) {
			t.Fatalf("%s: %v", ip, err)
		}
		if err := CheckListenIP(ip, true); err != nil {
			t.Fatalf("%s with authentication: %v", ip, err)
		}
	}
	if err := CheckListenIP("my-host", false); err == nil || !strings.Contains(err.Error(), "is not an IP address") {
		t.Fatalf("hostname: %v", err)
	}
}

// The real Web UI, behind the guard: its page and its API answer on the
// served address, and a foreign Host is refused.
func TestEmbeddedWebUIBehindTheHostCheck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Memory: true, GRPCPort: freeTestPort(t), UIPort: freeTestPort(t), LogLevel: "error", LogFile: t.TempDir() + "/temporal.log"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Stop() }()
	get := func(path, host string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.UIAddress()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	var code int
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for {
		if code, body = get("/", ""); code == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != http.StatusOK || !strings.Contains(strings.ToLower(body), "<html") {
		t.Fatalf("UI page: %d %.200q", code, body)
	}
	// The UI's API reaches the frontend (an empty namespace lists as {}).
	if code, body = get("/api/v1/namespaces/default/workflows", ""); code != http.StatusOK || !strings.HasPrefix(body, "{") {
		t.Fatalf("UI API through the guard: %d %.300q", code, body)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.UIAddress(), "http://"))
	if code, _ = get("/", "attacker.example:"+port); code != http.StatusMisdirectedRequest {
		t.Fatalf("foreign Host: %d, want 421", code)
	}
}

// A browser that goes away mid-request (a tab closed) is no error: the
// proxy logs nothing for it. A UI server that does not answer still gets
// a 502 and one line naming the request.
func TestProxyLogsNoLineWhenTheBrowserLeaves(t *testing.T) {
	var logged strings.Builder
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)

	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer backend.Close()
	defer close(release)
	port := freeTestPort(t)
	g, err := startHostGuard("127.0.0.1", port, strings.TrimPrefix(backend.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.stop()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/namespaces", nil)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the request outlived its context")
	}
	time.Sleep(200 * time.Millisecond) // the proxy sees the cancellation
	if strings.Contains(logged.String(), "proxy error") || strings.Contains(logged.String(), "Web UI proxy") {
		t.Fatalf("a closed tab logged: %q", logged.String())
	}

	// The UI server gone: 502 and one line.
	down, front := freeTestPort(t), freeTestPort(t)
	g2, err := startHostGuard("127.0.0.1", front, net.JoinHostPort("127.0.0.1", strconv.Itoa(down)))
	if err != nil {
		t.Fatal(err)
	}
	defer g2.stop()
	resp, err := http.Get("http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(front)) + "/workflows")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("UI server down: %d, want 502", resp.StatusCode)
	}
	if !strings.Contains(logged.String(), "visor dev: Web UI proxy: GET /workflows:") {
		t.Fatalf("UI server down logged %q", logged.String())
	}
}
