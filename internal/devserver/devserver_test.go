package devserver

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPortInUseIsAClearError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(context.Background(), Options{Memory: true, GRPCPort: port, UIPort: -1})
	if err == nil || !strings.Contains(err.Error(), "gRPC (--grpc-port) port 127.0.0.1:"+strconv.Itoa(port)+" is not available") {
		t.Fatalf("err = %v, want a clear port-in-use error", err)
	}
	free := freeTestPort(t)
	_, err = Start(context.Background(), Options{Memory: true, GRPCPort: free, UIPort: port})
	if err == nil || !strings.Contains(err.Error(), "Web UI (--ui-port)") {
		t.Fatalf("err = %v, want the Web UI port named", err)
	}
}

// A second server on the same data directory is refused while the first
// runs, and the directory is usable again once it stopped.
func TestDataDirectoryIsLocked(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, err := Start(ctx, Options{DataDir: dir, GRPCPort: freeTestPort(t), UIPort: -1, LogLevel: "error", LogFile: dir + "/temporal.log"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(ctx, Options{DataDir: dir, GRPCPort: freeTestPort(t), UIPort: -1})
	if err == nil || !strings.Contains(err.Error(), "is in use by another visor dev") {
		t.Fatalf("second server on the same directory: %v", err)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	again, err := Start(ctx, Options{DataDir: dir, GRPCPort: freeTestPort(t), UIPort: -1, LogLevel: "error", LogFile: dir + "/temporal.log"})
	if err != nil {
		t.Fatalf("restart on the same directory: %v", err)
	}
	_ = again.Stop()
}

func freeTestPort(t *testing.T) int {
	t.Helper()
	p, err := freePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Ports handed out by one process never repeat, so no two listeners of
// the servers a process starts can draw the same one (the Temporal
// server ends the process when a bind fails).
func TestFreePortsNeverRepeatInAProcess(t *testing.T) {
	seen := map[int]bool{}
	for range 400 {
		p := freeTestPort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		if p < internalPortLow || p >= internalPortHigh {
			t.Fatalf("port %d outside [%d, %d)", p, internalPortLow, internalPortHigh)
		}
		seen[p] = true
	}
}
