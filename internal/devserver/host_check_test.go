package devserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
