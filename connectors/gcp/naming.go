package gcp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// Labels this connector puts on instances (through the template).
// Compute label values allow lower-case letters, digits, "_" and "-" only,
// so the pool is a hash of its label; the group is the MIG's name.
const (
	LabelPool  = "visor-pool"
	LabelGroup = "visor-group"
)

// machineTypeRE is a Compute machine type name: e2-standard-4, a2-highgpu-1g,
// n2-custom-4-8192.
var machineTypeRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)+$`)

// poolHash is the pool's part of every name and its label value.
func poolHash(poolLabel string) string { return connectors.NameHash(poolLabel)[:10] }

// GroupPrefix starts the name of every MIG and template of the pool.
func GroupPrefix(poolLabel string) string { return "visor-" + poolHash(poolLabel) + "-" }

// GroupName is the pool's MIG (and instance template) of that machine
// type: at most 6+11+46 = 63 characters, as Compute allows.
func GroupName(poolLabel, machineType string) string {
	name := GroupPrefix(poolLabel) + machineType
	return strings.TrimRight(name[:min(len(name), 63)], "-")
}

// baseInstanceName is what the MIG puts before each instance's four-
// character suffix; Compute allows 58 characters.
func baseInstanceName(group string) string {
	return strings.TrimRight(group[:min(len(group), 58)], "-")
}

// description is what the connector writes into a MIG's and a template's
// description, and reads back to know a group as the pool's.
type description struct {
	Visor struct {
		Pool   string            `json:"pool"`
		Size   string            `json:"size"`
		Key    string            `json:"key,omitempty"`
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"visorFleet"`
}

// maxDescription is how long Compute lets a description be.
const maxDescription = 2048

func describe(poolLabel, size string, key connectors.IdempotencyKey, labels map[string]string) (string, error) {
	var d description
	d.Visor.Pool, d.Visor.Size, d.Visor.Labels = poolLabel, size, labels
	d.Visor.Key = connectors.NameHash(string(key))[:24]
	b, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	if len(b) > maxDescription {
		return "", fmt.Errorf("spec.labels: %d bytes as a description; Compute allows %d", len(b), maxDescription)
	}
	return string(b), nil
}

// readDescription is a description the connector wrote, or ok false.
func readDescription(s string) (description, bool) {
	var d description
	if json.Unmarshal([]byte(s), &d) != nil || d.Visor.Pool == "" || d.Visor.Size == "" {
		return description{}, false
	}
	return d, true
}

// LabelsOfDescription are the group labels a MIG's description holds
// (nil when Visor did not write it), for whoever joins its instances.
func LabelsOfDescription(desc string) map[string]string {
	d, _ := readDescription(desc)
	return d.Visor.Labels
}

// requestID is the requestId Compute deduplicates a mutating call by: a
// UUID (version 4 form) from the decision's key and what the call does,
// so the same decision retried sends the same ID.
func requestID(key connectors.IdempotencyKey, parts ...string) string {
	h := connectors.NameHash(append([]string{string(key)}, parts...)...)
	b := []byte(h[:32])
	b[12] = '4'
	b[16] = "89ab"[strings.IndexByte("0123456789abcdef", b[16])%4]
	return fmt.Sprintf("%s-%s-%s-%s-%s", b[0:8], b[8:12], b[12:16], b[16:20], b[20:32])
}

// lastSegment is the name at the end of a resource URL.
func lastSegment(url string) string { return url[strings.LastIndex(url, "/")+1:] }
