package devserver

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
)

// The range internal ports are drawn from: above the well-known and
// common service ports, below the kernel's ephemeral range (Linux's
// default starts at 32768). A port the kernel hands out for ":0" is
// ephemeral, so an outgoing connection could take it between the check
// and the server's bind (make chaos saw 1 start in ~50 fail on ringpop's
// bind).
const (
	internalPortLow  = 20000
	internalPortHigh = 32000
	// portSlices split the range so concurrent processes (go test runs
	// packages in parallel, each starting servers) draw from different
	// slices: a port checked free is released before the server binds it,
	// and the Temporal server exits the process when a bind fails.
	portSlices = 8
)

// handedOut holds every port this process gave out: a port is checked
// free and released, so without it two listeners of one server (or two
// servers of one test) could draw the same one and the second bind would
// end the process.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePort picks a port for a listener that is free now and that this
// process has not handed out before: first from the process's own slice
// of the internal range, then from the whole range, then one the kernel
// picks.
func freePort(ip string) (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	width := (internalPortHigh - internalPortLow) / portSlices
	own := internalPortLow + (os.Getpid()%portSlices)*width
	for _, r := range [][2]int{{own, own + width}, {internalPortLow, internalPortHigh}} {
		for range 64 {
			port := r[0] + rand.IntN(r[1]-r[0])
			if handedOut.ports[port] || !listenable(ip, port) {
				continue
			}
			handedOut.ports[port] = true
			return port, nil
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	handedOut.ports[port] = true
	return port, nil
}

func listenable(ip string, port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}
