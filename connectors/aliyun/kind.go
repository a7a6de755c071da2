package aliyun

import "github.com/hanzoai/visor-fleet/connectors"

// Kind registers Alibaba Cloud ECS with a worker's clusters file (section
// "aliyun").
var Kind = connectors.StatelessKind[Config](ProviderName, New, Catalog)

// Validate reports what is wrong in a clusters file's aliyun section.
func (c *Config) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	c.CheckJoin(p)
	connectors.Required(p, "regionId", c.RegionID, "an ECS region such as us-east-1")
	connectors.Required(p, "imageId", c.ImageID, "the image instances boot, e.g. ubuntu_24_04_x64_20G_alibase_20260101.vhd")
	connectors.Required(p, "securityGroupId", c.SecurityGroupID, "the security group of the cluster's nodes (sg-...)")
	connectors.Required(p, "vSwitchId", c.VSwitchID, "the vSwitch (subnet) nodes join (vsw-...)")
	connectors.NotNegative(p, "systemDiskGiB", c.SystemDiskGiB)
	if c.Protocol != "" && c.Protocol != "http" && c.Protocol != "https" {
		p.Add("protocol", `%q must be "http" or "https"`, c.Protocol)
	}
}

// CredentialRefs are the section's references, for the loader to anchor.
func (c *Config) CredentialRefs() []*connectors.CredentialRef {
	return []*connectors.CredentialRef{&c.Credentials, &c.ClusterJoin}
}
