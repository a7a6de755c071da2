package vsphere

import (
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// Shape is the hardware and price of one VM template an operator offers
// as a node size, as written in the connector's configuration.
type Shape = sizing.Shape

const defaultMaxPods = sizing.DefaultShapeMaxPods

// vsphereDaemons: CNI, kube-proxy and the vSphere CSI node plugin.
var vsphereDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 250 * types.MiB, Pods: 3}

// ShapeCatalog validates the configured shapes and returns them as a
// catalog. Every problem is reported, each naming the template and field.
func ShapeCatalog(templates []Shape) ([]types.InstanceType, error) {
	return sizing.ShapeCatalog(ProviderName, vsphereDaemons, templates)
}
