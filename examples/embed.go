// Package examples ships the demo spec `visor dev` registers when no file
// is given, so a fresh clone shows pools scaling with no configuration.
package examples

import _ "embed"

// Pools is examples/pools.yaml.
//
//go:embed pools.yaml
var Pools []byte

// KubePools is examples/kube-pools.yaml, the demo of `visor dev --kube`.
//
//go:embed kube-pools.yaml
var KubePools []byte
