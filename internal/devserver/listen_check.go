package devserver

import (
	"fmt"
	"net"
)

// CheckListenIP refuses an address beyond loopback unless callers must
// authenticate: without it, anyone who can reach the port may scale, pause
// and delete every pool and read every tenant's state.
func CheckListenIP(ip string, authenticated bool) error {
	parsed := net.ParseIP(ip)
	if ip == "localhost" || (parsed != nil && parsed.IsLoopback()) {
		return nil
	}
	if parsed == nil {
		return fmt.Errorf("--ip %q is not an IP address (use 127.0.0.1)", ip)
	}
	if authenticated {
		return nil
	}
	return fmt.Errorf("--ip %s listens beyond this machine, but the embedded server does not authenticate its callers: anyone who can reach it could scale, pause and delete every pool. Keep the default 127.0.0.1 and reach it through an SSH tunnel (ssh -L 7233:127.0.0.1:7233 -L 8233:127.0.0.1:8233 HOST), or run a Temporal cluster with mTLS and visor worker", ip)
}
