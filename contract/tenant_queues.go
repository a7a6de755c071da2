package contract

import (
	"fmt"
	"strings"
)

// TenantQueuePrefix names a tenant's own provider task queues:
// tenant-<org>, or tenant-<org>-<anything>, served by a worker inside the
// tenant's own cloud account with its credentials. The frontend lets a
// tenant poll only its own (auth/frontend), and a pool may name only its
// own org's.
const TenantQueuePrefix = "tenant-"

// IsTenantQueueOf says whether queue is one of org's tenant queues.
func IsTenantQueueOf(queue, org string) bool {
	own := TenantQueuePrefix + org
	return queue == own || strings.HasPrefix(queue, own+"-")
}

// CheckProviderQueue refuses a pool whose providerTaskQueue is another
// org's tenant queue: that org's worker would provision, drain and delete
// for this pool with that org's cloud credentials, in its account. Queues
// outside the tenant- names are the platform's.
func (s PoolSpec) CheckProviderQueue() error {
	q := s.ProviderTaskQueue
	if !strings.HasPrefix(q, TenantQueuePrefix) || IsTenantQueueOf(q, s.Key.Org) {
		return nil
	}
	return fmt.Errorf("providerTaskQueue %q is another org's tenant queue: a pool of org %s may name only %s%s or %s%s-… (or a platform queue)",
		q, s.Key.Org, TenantQueuePrefix, s.Key.Org, TenantQueuePrefix, s.Key.Org)
}
