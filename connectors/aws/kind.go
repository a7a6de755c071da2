package aws

import (
	"github.com/hanzoai/visor-fleet/connectors"

	"github.com/hanzoai/visor-fleet/catalogs"
)

// Kind registers AWS with a worker's clusters file (section "aws").
var Kind = connectors.StatelessKind[Config](ProviderName, New, catalogs.AWS)

// Validate reports what is wrong in a clusters file's aws section.
func (c *Config) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	connectors.Required(p, "region", c.Region, "an AWS region such as eu-west-1")
	switch c.Mode {
	case ModeEKS:
		connectors.Required(p, "clusterName", c.ClusterName, `the EKS cluster's name in mode "eks"`)
	case ModeASG, ModeEC2:
	default:
		p.Add("mode", "%q is not one of eks, asg, ec2", c.Mode)
	}
}
