// Package rbac ships the connector's ClusterRole manifest, so a binary run
// outside the repository (`visor dev --kube`) binds the same rights the
// Helm chart and the tests do.
package rbac

import _ "embed"

// ClusterRole is deploy/rbac/clusterrole.yaml.
//
//go:embed clusterrole.yaml
var ClusterRole []byte
