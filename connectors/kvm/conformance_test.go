package kvm_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"

	"github.com/digitalocean/go-libvirt"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
	"github.com/hanzoai/visor-fleet/connectors/kvm"
)

// The connector against a real libvirtd serving test:///default, through
// a proxy on its socket that can drop the answer to a call or refuse it
// with libvirt's own error reply. libvirt takes no credential (the
// socket's file permissions are its access control), so the credential
// behaviour is skipped and there is no secret to look for.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		sock, l := host(t)
		px := newRPCProxy(t, sock)
		p, err := kvm.New(t.Context(), config(px.sock), nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close(t.Context()) })
		return conformance.Double{
			Provider: p,
			Spec:     connectors.NodeGroupSpec{Pool: pool, Size: "small"},
			Machines: func(t *testing.T) int { return len(poolDomains(t, l)) },
			LoseAnswer: func(*testing.T) {
				px.loseNext(procDomainDefineXML)
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					return "a libvirt host has no account quota: it refuses a domain only for want of room on the host (capacity)"
				case conformance.Capacity:
					// QEMU cannot have the guest's memory: libvirt's answer to
					// virDomainCreate on a full host.
					px.refuse(procDomainCreate, libvirt.ErrInternalError, "internal error: process exited while connecting to monitor: qemu-system-x86_64: cannot set up guest memory 'pc.ram': Cannot allocate memory")
				case conformance.Auth:
					// libvirt's access control driver (polkit) denying the call.
					px.refuse(procDomainDefineXML, libvirt.ErrAccessDenied, "access denied: 'domain.write' denied by policy")
				}
				return ""
			},
		}
	})
}

// libvirt's remote protocol procedures the proxy acts on.
const (
	procDomainCreate    = 9
	procDomainDefineXML = 11
)

// rpcProxy passes libvirt's remote protocol between a socket of its own
// and libvirtd's, packet by packet. A packet is a 4-byte length (itself
// included) and a header of program, version, procedure, type (0 call,
// 1 reply), serial and status (0 ok, 1 error), all big-endian.
type rpcProxy struct {
	sock string

	mu      sync.Mutex
	lose    map[uint32]bool // procedure -> drop the connection instead of its next answer
	refusal map[uint32]libvirt.Error
}

func newRPCProxy(t *testing.T, upstream string) *rpcProxy {
	t.Helper()
	px := &rpcProxy{sock: filepath.Join(t.TempDir(), "px.sock"), lose: map[uint32]bool{}, refusal: map[uint32]libvirt.Error{}}
	ln, err := net.Listen("unix", px.sock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("unix", upstream)
			if err != nil {
				_ = c.Close()
				continue
			}
			go px.serve(c, u)
		}
	}()
	return px
}

func (px *rpcProxy) loseNext(proc uint32) {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.lose[proc] = true
}

// refuse answers every later call of proc with err, applying nothing.
func (px *rpcProxy) refuse(proc uint32, code libvirt.ErrorNumber, message string) {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.refusal[proc] = libvirt.Error{Code: uint32(code), Message: message}
}

func (px *rpcProxy) serve(c, u net.Conn) {
	defer c.Close()
	defer u.Close()
	var (
		writeMu sync.Mutex // the client hears forwarded answers and the proxy's refusals
		lostMu  sync.Mutex
		lost    = map[uint32]bool{} // serials whose answer is dropped
	)
	go func() {
		defer c.Close()
		for {
			pkt, err := readPacket(u)
			if err != nil {
				return
			}
			lostMu.Lock()
			drop := lost[binary.BigEndian.Uint32(pkt[20:24])]
			lostMu.Unlock()
			if drop {
				return // the call took effect; its answer is lost with the connection
			}
			writeMu.Lock()
			_, err = c.Write(pkt)
			writeMu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	for {
		pkt, err := readPacket(c)
		if err != nil {
			return
		}
		proc, typ, serial := binary.BigEndian.Uint32(pkt[12:16]), binary.BigEndian.Uint32(pkt[16:20]), binary.BigEndian.Uint32(pkt[20:24])
		px.mu.Lock()
		refusal, refused := px.refusal[proc]
		lose := px.lose[proc]
		if lose && typ == 0 {
			delete(px.lose, proc)
		}
		px.mu.Unlock()
		if typ == 0 && refused {
			writeMu.Lock()
			_, err = c.Write(errorReply(pkt[4:12], proc, serial, refusal))
			writeMu.Unlock()
			if err != nil {
				return
			}
			continue
		}
		if typ == 0 && lose {
			lostMu.Lock()
			lost[serial] = true
			lostMu.Unlock()
		}
		if _, err := u.Write(pkt); err != nil {
			return
		}
	}
}

func readPacket(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 28 || n > 1<<24 {
		return nil, errors.New("bad libvirt packet length")
	}
	pkt := make([]byte, n)
	copy(pkt, size[:])
	_, err := io.ReadFull(r, pkt[4:])
	return pkt, err
}

// errorReply is libvirtd's answer of a remote_error: code, domain, the
// message (an optional string), level, then the optional domain, strings
// and network left empty and the two ints zero.
func errorReply(programVersion []byte, proc, serial uint32, e libvirt.Error) []byte {
	be := binary.BigEndian
	body := be.AppendUint32(nil, e.Code)
	body = be.AppendUint32(body, 10) // VIR_FROM_QEMU
	body = be.AppendUint32(body, 1)  // the message is present
	body = be.AppendUint32(body, uint32(len(e.Message)))
	body = append(body, e.Message...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	body = be.AppendUint32(body, 2) // VIR_ERR_ERROR
	for range 4 {                   // dom, str1, str2, str3: absent
		body = be.AppendUint32(body, 0)
	}
	body = be.AppendUint32(body, 0) // int1
	body = be.AppendUint32(body, 0) // int2
	body = be.AppendUint32(body, 0) // net: absent
	pkt := be.AppendUint32(nil, uint32(28+len(body)))
	pkt = append(pkt, programVersion...)
	pkt = be.AppendUint32(pkt, proc)
	pkt = be.AppendUint32(pkt, 1) // reply
	pkt = be.AppendUint32(pkt, serial)
	pkt = be.AppendUint32(pkt, 1) // error
	return append(pkt, body...)
}
