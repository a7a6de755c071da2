package contract

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

func TestAPoolNamesOnlyItsOwnOrgsTenantQueue(t *testing.T) {
	key := types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "aws", Cluster: "eks-1"}
	for _, c := range []struct {
		queue string
		ok    bool
	}{
		{"", true}, {DefaultTaskQueue, true}, {"gpu-workers", true},
		{"tenant-acme", true}, {"tenant-acme-eu", true},
		{"tenant-globex", false}, {"tenant-acmecorp", false}, {"tenant-", false},
	} {
		err := PoolSpec{Key: key, ProviderTaskQueue: c.queue}.CheckProviderQueue()
		if (err == nil) != c.ok {
			t.Errorf("queue %q: err = %v, want ok %v", c.queue, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "may name only tenant-acme or tenant-acme-…") {
			t.Errorf("queue %q: error %q does not say which queues the pool may name", c.queue, err)
		}
	}
}
