package vsphere

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// GroupID names the node group of a pool's size: "<pool label>/<size>",
// the same two names as its folders (<Folder>/<pool label>/<size>).
func GroupID(poolLabel, size string) string { return poolLabel + "/" + size }

func parseGroupID(id string) (poolLabel, size string, err error) {
	poolLabel, size, ok := strings.Cut(id, "/")
	if !ok || strings.Contains(size, "/") {
		return "", "", fmt.Errorf("group ID %q must be <pool label>/<size>", id)
	}
	if err := validPoolLabel(poolLabel); err != nil {
		return "", "", fmt.Errorf("group ID %q: %w", id, err)
	}
	if err := validSize(size); err != nil {
		return "", "", fmt.Errorf("group ID %q: %w", id, err)
	}
	return poolLabel, size, nil
}

// validPoolLabel accepts org.project.service.provider, each a DNS label.
func validPoolLabel(label string) error { return types.ValidateNodePoolLabel(label) }

// validSize: sizes name folders and go into VM names.
func validSize(size string) error {
	if size == "" {
		return errors.New("size is empty")
	}
	if strings.ContainsAny(size, "/%\\") {
		return fmt.Errorf("size %q must not contain '/', '\\' or '%%'", size)
	}
	return nil
}

// maxVMNameLen keeps the VM name usable as a host name and node name.
const maxVMNameLen = 63

// VMName is the name of the ordinal-th VM a decision (key) clones into a
// pool's size folder: "<pool label>-<size>-<6 hex of the key>-<ordinal>",
// lower-case DNS-label characters, at most 63. A retry of the same decision
// asks for the same names, so vCenter's DuplicateName catches a clone that
// already happened; different decisions never reuse a name, so a node
// name is never recycled while Kubernetes may still remember it.
func VMName(poolLabel, size string, key connectors.IdempotencyKey, ordinal int) string {
	sum := sha256.Sum256([]byte(key))
	suffix := "-" + hex.EncodeToString(sum[:3]) + "-" + strconv.Itoa(ordinal)
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(poolLabel+"-"+size))
	base = strings.Trim(base, "-")
	if len(base) > maxVMNameLen-len(suffix) {
		base = strings.TrimRight(base[:maxVMNameLen-len(suffix)], "-")
	}
	if base == "" {
		base = "visor"
	}
	return base + suffix
}
