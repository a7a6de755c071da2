package proxmox

import (
	"fmt"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// Kind registers Proxmox VE with a worker's clusters file (section
// "proxmox"). Its sizes are the configured templates, so it has no
// built-in catalog.
var Kind = connectors.StatelessKind[Config](ProviderName, New, nil)

// Validate reports what is wrong in a clusters file's proxmox section.
func (c *Config) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	connectors.Required(p, "endpoint", c.Endpoint, "the API's URL, e.g. https://pve1:8006/api2/json")
	if c.Endpoint != "" && !strings.HasPrefix(c.Endpoint, "https://") && !strings.HasPrefix(c.Endpoint, "http://") {
		p.Add("endpoint", "%q must be the API's URL, e.g. https://pve1:8006/api2/json", c.Endpoint)
	}
	if len(c.Templates) == 0 {
		p.Add("templates", "is empty; each size is a template VM")
	}
	for i, t := range c.Templates {
		if err := poolgroup.ValidSize(t.Name); err != nil {
			p.Add(fmt.Sprintf("templates[%d].name", i), "%v", err)
		}
		if t.VMID < 100 {
			p.Add(fmt.Sprintf("templates[%d].vmid", i), "must be the template VM's ID (100 or more), got %d", t.VMID)
		}
		if err := validNodeName(t.Node); err != nil {
			p.Add(fmt.Sprintf("templates[%d].node", i), "%v; it must be the cluster node holding the template", err)
		}
	}
	for i, n := range c.TargetNodes {
		if err := validNodeName(n); err != nil {
			p.Add(fmt.Sprintf("targetNodes[%d]", i), "%v", err)
		}
	}
	if c.TaskPoll < 0 {
		p.Add("taskPoll", "must not be negative, got %s", c.TaskPoll)
	}
	if c.TaskTimeout < 0 {
		p.Add("taskTimeout", "must not be negative, got %s", c.TaskTimeout)
	}
	if len(c.Templates) > 0 {
		if _, err := c.shapeCatalog(); err != nil {
			p.Add("templates", "%v", err)
		}
	}
}
