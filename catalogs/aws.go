package catalogs

import (
	_ "embed"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// eksDaemons: aws-node (VPC CNI), kube-proxy and the EBS CSI node plugin.
var eksDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 200 * types.MiB, Pods: 3}

//go:embed aws.csv
var awsRowsTable string

// awsRows are the table, read once.
var awsRows = sizing.MustParseCatalogTable(awsRowsTable)

// AWS lists EC2 instance types for EKS managed node groups at
// us-east-1 on-demand Linux prices, with an on-demand offering in every
// zone and spot where aws_spot.csv prices it: general purpose (m6i), compute (c6i),
// memory (r6i) and GPU (g5 with A10G, p4d with A100, p5 with H100). MaxPods
// is the VPC CNI's ENI limit for each type, which is also what the EKS AMI
// sizes its memory reservation from.
func AWS() []types.InstanceType {
	return withAWSOfferings(sizing.WithRootDisks(sizing.BuildCatalog(priceDate, awsRows, func(cpu, _, maxPods int64) types.Resources {
		return eksOverhead(cpu, maxPods, eksDaemons)
	}), eksRootDisk))
}

// eksRootDisk: an EKS managed node group's nodes boot with the launch
// template's default 20 GiB gp3 volume unless the group sets diskSize;
// every size alike.
func eksRootDisk(string) int64 { return 20 * types.GiB }

// eksOverhead follows the EKS-optimized AMI: CPU as sizing.StandardOverhead,
// but memory reserved as 11 MiB per possible pod plus 255 MiB, because the
// AMI sizes kube-reserved from max pods (ENI-limited) rather than RAM.
func eksOverhead(milliCPU, maxPods int64, d sizing.DaemonAllowance) types.Resources {
	return types.Resources{
		MilliCPU: sizing.KubeReservedCPU(milliCPU) + d.MilliCPU,
		Memory:   11*types.MiB*maxPods + 255*types.MiB + sizing.EvictionHard + d.Memory,
		Pods:     d.Pods,
	}
}
