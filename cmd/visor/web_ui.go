package main

import (
	"net"
	"net/url"
	"os"
	"strings"
)

// uiURLEnv names the Web UI's base URL when --ui-url is not given.
const uiURLEnv = "VISOR_UI_URL"

// devUIURL is where `visor dev` serves the Web UI by default.
const devUIURL = "http://127.0.0.1:8233"

// webUIBase is the Web UI's base URL: the flag, the environment, or visor
// dev's default when the CLI talks to a Temporal on this machine; "" when
// unknown (a remote cluster whose UI address the CLI cannot guess).
func (p *poolCmd) webUIBase(flag string) string {
	if flag != "" {
		return strings.TrimRight(flag, "/")
	}
	if env := os.Getenv(uiURLEnv); env != "" {
		return strings.TrimRight(env, "/")
	}
	addr := p.g.connectOptions().Address
	if addr == "" {
		return devUIURL
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if host == "localhost" {
		return devUIURL
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return devUIURL
	}
	return ""
}

// poolWebUIURL is the Web UI page of one run of a pool. The workflow ID
// holds slashes, so it is escaped as one path segment, as the UI does.
func poolWebUIURL(base, namespace, workflowID, runID string) string {
	if base == "" || runID == "" {
		return ""
	}
	if namespace == "" {
		namespace = "default"
	}
	return base + "/namespaces/" + url.PathEscape(namespace) + "/workflows/" + url.PathEscape(workflowID) + "/" + url.PathEscape(runID) + "/history"
}
