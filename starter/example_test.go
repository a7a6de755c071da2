package starter_test

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// This is the Go client of docs/contract.md; it has no Output line, so it is
// compiled with the tests but not run (it needs a Temporal server).
func ExampleScalePool() {
	ctx := context.Background()
	c, err := starter.Dial(ctx, starter.ConnectOptions{}.FromEnv()) // TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS…
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	key, err := types.ParsePoolID("pool/acme/storefront/api/sim/sim-east")
	if err != nil {
		fmt.Println(err)
		return
	}
	acc, err := starter.ScalePool(ctx, c, key, contract.ScaleRequest{Target: 3, Reason: "launch day", RequestedBy: "deploy-bot"})
	var refused *temporal.ApplicationError
	if errors.As(err, &refused) {
		fmt.Println("the pool said no:", refused.Message())
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("decision #%d: %d → %d nodes\n", acc.Seq, acc.From, acc.Target)

	st, err := starter.PoolStatus(ctx, c, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.State, st.Nodes, st.TargetNodes)
}
