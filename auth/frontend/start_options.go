package frontend

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// startFields are the fields of a tenant's start request (a start, a
// signal-with-start, the start of an update-with-start) it may set at all;
// any other field set is refused, so a field a later API adds is refused
// until someone decides it is harmless. The rest of the start's options —
// memo, retry policy, cron, timeouts, start delay, completion callbacks,
// links, priority, eager execution, a previous run's result — shape how the
// server runs the pool or what other orgs see, and are the platform's.
var startFields = []protoreflect.Name{
	"namespace", "workflow_id", "workflow_type", "task_queue", "input", "identity", "request_id",
	"header", "user_metadata", "workflow_task_timeout",
	"workflow_id_reuse_policy", "workflow_id_conflict_policy", "search_attributes",
	"signal_name", "signal_input", // signal-with-start
}

// maxTenantTaskTimeout bounds a tenant's workflow task timeout: a longer
// one only delays the pool's recovery from a lost worker.
const maxTenantTaskTimeout = time.Minute

// startOptions refuses a tenant's start of pool id that sets an option the
// platform owns, naming the field; req is the start's request message.
func startOptions(req proto.Message, id string) error {
	key, err := types.ParsePoolID(id)
	if err != nil {
		return err
	}
	var refused error
	req.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() != nil && fd.Cardinality() != protoreflect.Repeated && proto.Size(v.Message().Interface()) == 0 {
			return true // an empty message the SDK always sends (a zero timeout, no priority)
		}
		name := fd.Name()
		if !slices.Contains(startFields, name) {
			refused = fmt.Errorf("start option %s is the platform's: a tenant's start of %s may not set it", name, id)
			return false
		}
		refused = startValue(name, v, key)
		return refused == nil
	})
	return refused
}

// startValue checks the allowed options whose value matters.
func startValue(name protoreflect.Name, v protoreflect.Value, key types.PoolKey) error {
	switch name {
	case "workflow_task_timeout":
		if d := v.Message().Interface().(*durationpb.Duration).AsDuration(); d > maxTenantTaskTimeout {
			return fmt.Errorf("start option workflow_task_timeout %s is longer than a tenant may set (%s)", d, maxTenantTaskTimeout)
		}
	case "workflow_id_reuse_policy":
		if p := enumspb.WorkflowIdReusePolicy(v.Enum()); p == enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING {
			return fmt.Errorf("start option workflow_id_reuse_policy %s would terminate the running pool; only platform administrators terminate pools", p)
		}
	case "workflow_id_conflict_policy":
		if p := enumspb.WorkflowIdConflictPolicy(v.Enum()); p == enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING {
			return fmt.Errorf("start option workflow_id_conflict_policy %s would terminate the running pool; only platform administrators terminate pools", p)
		}
	case "search_attributes":
		return startSearchAttributes(v.Message().Interface().(*commonpb.SearchAttributes), key)
	}
	return nil
}

// startSearchAttributes allows only what the pool's ID says (its key) and
// the starting state, which is what `visor pool apply` sends; the pool
// upserts the rest from its own state. Anything else would let a tenant
// list its pool under another org or claim a size it does not have.
func startSearchAttributes(sa *commonpb.SearchAttributes, key types.PoolKey) error {
	want := map[string]string{
		contract.SAOrg: key.Org, contract.SAProject: key.Project, contract.SAService: key.Service,
		contract.SAProvider: key.Provider, contract.SACluster: key.Cluster, contract.SAState: contract.StateStarting,
	}
	for _, name := range slices.Sorted(maps.Keys(sa.GetIndexedFields())) {
		w, ok := want[name]
		if !ok {
			return fmt.Errorf("start search attribute %s is the pool's to publish: a tenant's start may set only %s", name, strings.Join(slices.Sorted(maps.Keys(want)), ", "))
		}
		var got string
		if err := json.Unmarshal(sa.GetIndexedFields()[name].GetData(), &got); err != nil || got != w {
			return fmt.Errorf("start search attribute %s = %s: pool %s must say %q", name, sa.GetIndexedFields()[name].GetData(), key.WorkflowID(), w)
		}
	}
	return nil
}
