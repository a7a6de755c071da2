package catalogs

import (
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// eksDaemons: aws-node (VPC CNI), kube-proxy and the EBS CSI node plugin.
var eksDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 200 * types.MiB, Pods: 3}

// AWS lists EC2 instance types for EKS managed node groups at
// us-east-1 on-demand Linux prices: general purpose (m6i), compute (c6i),
// memory (r6i) and GPU (g5 with A10G, p4d with A100, p5 with H100). MaxPods
// is the VPC CNI's ENI limit for each type, which is also what the EKS AMI
// sizes its memory reservation from.
func AWS() []types.InstanceType {
	const gib = 1024
	row := sizing.Row
	rows := []sizing.CatalogRow{
		row("m6i.large", "m6i", 2, 8*gib, 0, "", 29, 0.096),
		row("m6i.xlarge", "m6i", 4, 16*gib, 0, "", 58, 0.192),
		row("m6i.2xlarge", "m6i", 8, 32*gib, 0, "", 58, 0.384),
		row("m6i.4xlarge", "m6i", 16, 64*gib, 0, "", 234, 0.768),
		row("m6i.8xlarge", "m6i", 32, 128*gib, 0, "", 234, 1.536),
		row("m6i.12xlarge", "m6i", 48, 192*gib, 0, "", 234, 2.304),
		row("m6i.16xlarge", "m6i", 64, 256*gib, 0, "", 737, 3.072),
		row("m6i.24xlarge", "m6i", 96, 384*gib, 0, "", 737, 4.608),

		row("c6i.large", "c6i", 2, 4*gib, 0, "", 29, 0.085),
		row("c6i.xlarge", "c6i", 4, 8*gib, 0, "", 58, 0.17),
		row("c6i.2xlarge", "c6i", 8, 16*gib, 0, "", 58, 0.34),
		row("c6i.4xlarge", "c6i", 16, 32*gib, 0, "", 234, 0.68),
		row("c6i.8xlarge", "c6i", 32, 64*gib, 0, "", 234, 1.36),
		row("c6i.12xlarge", "c6i", 48, 96*gib, 0, "", 234, 2.04),
		row("c6i.16xlarge", "c6i", 64, 128*gib, 0, "", 737, 2.72),
		row("c6i.24xlarge", "c6i", 96, 192*gib, 0, "", 737, 4.08),

		row("r6i.large", "r6i", 2, 16*gib, 0, "", 29, 0.126),
		row("r6i.xlarge", "r6i", 4, 32*gib, 0, "", 58, 0.252),
		row("r6i.2xlarge", "r6i", 8, 64*gib, 0, "", 58, 0.504),
		row("r6i.4xlarge", "r6i", 16, 128*gib, 0, "", 234, 1.008),
		row("r6i.8xlarge", "r6i", 32, 256*gib, 0, "", 234, 2.016),
		row("r6i.12xlarge", "r6i", 48, 384*gib, 0, "", 234, 3.024),
		row("r6i.16xlarge", "r6i", 64, 512*gib, 0, "", 737, 4.032),

		row("g5.xlarge", "g5", 4, 16*gib, 1, "A10G", 58, 1.006),
		row("g5.2xlarge", "g5", 8, 32*gib, 1, "A10G", 58, 1.212),
		row("g5.4xlarge", "g5", 16, 64*gib, 1, "A10G", 234, 1.624),
		row("g5.12xlarge", "g5", 48, 192*gib, 4, "A10G", 737, 5.672),
		row("g5.48xlarge", "g5", 192, 768*gib, 8, "A10G", 345, 16.288),
		row("p4d.24xlarge", "p4d", 96, 1152*gib, 8, "A100", 737, 32.773),
		row("p5.48xlarge", "p5", 192, 2048*gib, 8, "H100", 100, 98.32),
	}
	return sizing.WithRootDisks(sizing.BuildCatalog(priceDate, rows, func(cpu, _, maxPods int64) types.Resources {
		return eksOverhead(cpu, maxPods, eksDaemons)
	}), eksRootDisk)
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
