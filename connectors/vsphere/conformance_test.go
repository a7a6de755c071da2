package vsphere

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
)

// The connector against vcsim (govmomi's simulator), faults injected on
// the real SOAP path.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		sim := startVCSim(t)
		pool := testPool("conformance")
		return conformance.Double{
			Provider:   sim.provider(t),
			Spec:       connectors.NodeGroupSpec{Pool: pool, Size: "small"},
			Credential: credEnv,
			Secret:     simPassword,
			Rebuild: func(ctx context.Context, ref connectors.CredentialRef) (connectors.Provider, error) {
				cfg := sim.config()
				cfg.Credentials = ref
				p, err := New(ctx, cfg, nil)
				if err == nil {
					t.Cleanup(func() { _ = p.Close(context.Background()) })
				}
				return p, err
			},
			WrongSecret: simUser + ":wrong-password",
			Machines: func(t *testing.T) int {
				vms, err := sim.finder.VirtualMachineList(context.Background(), "/DC0/vm/visor/"+pool.NodePoolLabel()+"/*/*")
				var nf *find.NotFoundError
				if errors.As(err, &nf) {
					return 0
				}
				require.NoError(t, err)
				return len(vms)
			},
			// The clone is applied; waiting for its task fails.
			LoseAnswer: func(*testing.T) {
				sim.model.Service.AddFaultRule(&simulator.FaultInjectionRule{
					MethodName: "WaitForUpdatesEx", ObjectType: "*", ObjectName: "*",
					Probability: 1, FaultType: simulator.FaultTypeCustom, Fault: &types.HostCommunication{},
					MaxCount: 1, Enabled: true,
				})
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					return "vSphere keeps no account quota: a full resource pool refuses as capacity"
				case conformance.Capacity:
					sim.addFault("CloneVM_Task", "DC0_C0_RP0_VM0", &types.InsufficientCpuResourcesFault{}, 0)
				case conformance.Auth:
					sim.addFault("CloneVM_Task", "DC0_C0_RP0_VM0", &types.NoPermission{}, 0)
				}
				return ""
			},
		}
	})
}
