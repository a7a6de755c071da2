package sizing

import "github.com/hanzoai/visor-fleet/types"

// eksDaemons: aws-node (VPC CNI), kube-proxy and the EBS CSI node plugin.
var eksDaemons = daemonAllowance{milliCPU: 150, memory: 200 * types.MiB, pods: 3}

// AWSCatalog lists EC2 instance types for EKS managed node groups at
// us-east-1 on-demand Linux prices: general purpose (m6i), compute (c6i),
// memory (r6i) and GPU (g5 with A10G, p4d with A100, p5 with H100). MaxPods
// is the VPC CNI's ENI limit for each type, which is also what the EKS AMI
// sizes its memory reservation from.
func AWSCatalog() []types.InstanceType {
	const gib = 1024
	rows := []row{
		{"m6i.large", "m6i", 2, 8 * gib, 0, "", 29, 0.096},
		{"m6i.xlarge", "m6i", 4, 16 * gib, 0, "", 58, 0.192},
		{"m6i.2xlarge", "m6i", 8, 32 * gib, 0, "", 58, 0.384},
		{"m6i.4xlarge", "m6i", 16, 64 * gib, 0, "", 234, 0.768},
		{"m6i.8xlarge", "m6i", 32, 128 * gib, 0, "", 234, 1.536},
		{"m6i.12xlarge", "m6i", 48, 192 * gib, 0, "", 234, 2.304},
		{"m6i.16xlarge", "m6i", 64, 256 * gib, 0, "", 737, 3.072},
		{"m6i.24xlarge", "m6i", 96, 384 * gib, 0, "", 737, 4.608},

		{"c6i.large", "c6i", 2, 4 * gib, 0, "", 29, 0.085},
		{"c6i.xlarge", "c6i", 4, 8 * gib, 0, "", 58, 0.17},
		{"c6i.2xlarge", "c6i", 8, 16 * gib, 0, "", 58, 0.34},
		{"c6i.4xlarge", "c6i", 16, 32 * gib, 0, "", 234, 0.68},
		{"c6i.8xlarge", "c6i", 32, 64 * gib, 0, "", 234, 1.36},
		{"c6i.12xlarge", "c6i", 48, 96 * gib, 0, "", 234, 2.04},
		{"c6i.16xlarge", "c6i", 64, 128 * gib, 0, "", 737, 2.72},
		{"c6i.24xlarge", "c6i", 96, 192 * gib, 0, "", 737, 4.08},

		{"r6i.large", "r6i", 2, 16 * gib, 0, "", 29, 0.126},
		{"r6i.xlarge", "r6i", 4, 32 * gib, 0, "", 58, 0.252},
		{"r6i.2xlarge", "r6i", 8, 64 * gib, 0, "", 58, 0.504},
		{"r6i.4xlarge", "r6i", 16, 128 * gib, 0, "", 234, 1.008},
		{"r6i.8xlarge", "r6i", 32, 256 * gib, 0, "", 234, 2.016},
		{"r6i.12xlarge", "r6i", 48, 384 * gib, 0, "", 234, 3.024},
		{"r6i.16xlarge", "r6i", 64, 512 * gib, 0, "", 737, 4.032},

		{"g5.xlarge", "g5", 4, 16 * gib, 1, "A10G", 58, 1.006},
		{"g5.2xlarge", "g5", 8, 32 * gib, 1, "A10G", 58, 1.212},
		{"g5.4xlarge", "g5", 16, 64 * gib, 1, "A10G", 234, 1.624},
		{"g5.12xlarge", "g5", 48, 192 * gib, 4, "A10G", 737, 5.672},
		{"g5.48xlarge", "g5", 192, 768 * gib, 8, "A10G", 345, 16.288},
		{"p4d.24xlarge", "p4d", 96, 1152 * gib, 8, "A100", 737, 32.773},
		{"p5.48xlarge", "p5", 192, 2048 * gib, 8, "H100", 100, 98.32},
	}
	return withRootDisks(buildCatalog(rows, func(cpu, _, maxPods int64) types.Resources {
		return eksOverhead(cpu, maxPods, eksDaemons)
	}), eksRootDisk)
}
