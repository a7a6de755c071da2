package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// help is the HELP line of every metric a worker serves, by family name as
// Prometheus shows it. docs/metrics.md lists the same, with labels. The
// SDK's instruments carry no description, so without this every HELP
// line would be empty.
var help = map[string]string{
	// The pools' own (emitted by the pool workflow, never on replay).
	"visor_pool_nodes":                    "Nodes the pool's last observation holds.",
	"visor_pool_target_nodes":             "Node count the pool is steering to (observed plus booting).",
	"visor_pool_pending_pods":             "Pods of the pool's service unschedulable in its last observation.",
	"visor_pool_scale_decisions_total":    "Decisions carried out, by direction (up, down, none), reason (floor, pending-pods, idle, manual, deregister, other) and outcome (ok, partial, noop, failed).",
	"visor_pool_decision_latency_seconds": "Time from a decision being made to its outcome being recorded: planning and provisioning for scale-up, drain and delete for scale-down.",
	"visor_pool_state":                    "1 for the pool's current state (label state: starting, steady, pending, scaling-up, idle-nodes, frozen, gated, paused, deregistering), 0 for the others.",
	"visor_pool_oldest_pending_seconds":   "How long the pool's longest-waiting unschedulable pod has waited, as of its last observation.",
	"visor_pool_hourly_cost_dollars":      "What the pool's nodes cost per hour at their catalog prices (the price actually paid where the provider reports it).",
	"visor_provider_errors_total":         "Activity attempts that failed with a classified provider error, by class (Retryable, RateLimited, InsufficientCapacity, NotFound, Permanent), activity and pool.",
	// Clusters and the meter, read on scrape (fleet_collector.go in cmd/visor).
	"visor_cluster_reachable":               "1 when the cluster's watcher reaches it and its last sample is fresh, else 0 (its pools freeze scale-down).",
	"visor_cluster_phase":                   "1 for the cluster's declared phase (label phase: pending, active, draining, disabled).",
	"visor_cluster_observation_age_seconds": "Seconds since the watcher's last successful sample of the cluster.",
	"visor_cluster_pools":                   "Pools registered with the cluster workflow.",
	"visor_cluster_status_errors_total":     "Cluster status queries that failed while scraping (no worker, timeout).",
	"visor_meter_node_hours_total":          "Node-hours recorded in the meter ledger, by org, pool and size; only complete UTC hours are recorded.",
	"visor_meter_hours_total":               "Hour events recorded in the meter ledger, by org, pool and size.",
	// The Temporal Go SDK's (https://docs.temporal.io/references/sdk-metrics).
	"temporal_request_total":                                   "Temporal client RPCs, by operation.",
	"temporal_request_failure_total":                           "Temporal client RPCs that failed, by operation and status code.",
	"temporal_request_latency_seconds":                         "Latency of Temporal client RPCs, by operation.",
	"temporal_long_request_total":                              "Long-poll RPCs (task polls, waiting updates), by operation.",
	"temporal_long_request_failure_total":                      "Long-poll RPCs that failed, by operation and status code.",
	"temporal_long_request_latency_seconds":                    "Latency of long-poll RPCs, by operation.",
	"temporal_request_resource_exhausted_total":                "Client RPCs refused by the server as resource exhausted, by cause.",
	"temporal_long_request_resource_exhausted_total":           "Long-poll RPCs refused as resource exhausted, by cause.",
	"temporal_workflow_completed_total":                        "Workflow runs completed, by workflow type.",
	"temporal_workflow_canceled_total":                         "Workflow runs canceled, by workflow type.",
	"temporal_workflow_failed_total":                           "Workflow runs failed, by workflow type.",
	"temporal_workflow_continue_as_new_total":                  "Workflow runs continued as new, by workflow type.",
	"temporal_workflow_endtoend_latency_seconds":               "Workflow run time from start to close, by workflow type.",
	"temporal_workflow_task_replay_latency_seconds":            "Time spent replaying history for a workflow task, by workflow type.",
	"temporal_workflow_task_queue_poll_empty_total":            "Workflow task polls that returned no task.",
	"temporal_workflow_task_queue_poll_succeed_total":          "Workflow task polls that returned a task.",
	"temporal_workflow_task_schedule_to_start_latency_seconds": "Time a workflow task waited for a worker, by workflow type.",
	"temporal_workflow_task_execution_latency_seconds":         "Time the worker spent on a workflow task, by workflow type.",
	"temporal_workflow_task_execution_failed_total":            "Workflow tasks that failed (panics, non-determinism), by workflow type and failure reason.",
	"temporal_workflow_task_no_completion_total":               "Workflow tasks that ended without completing.",
	"temporal_workflow_active_thread_count":                    "Workflow coroutines the worker holds.",
	"temporal_activity_poll_no_task_total":                     "Activity task polls that returned no task.",
	"temporal_activity_schedule_to_start_latency_seconds":      "Time an activity task waited for a worker, by activity type.",
	"temporal_activity_execution_failed_total":                 "Activity attempts that failed, by activity type.",
	"temporal_activity_execution_latency_seconds":              "Time an activity attempt ran, by activity type.",
	"temporal_activity_succeed_endtoend_latency_seconds":       "Time from an activity being scheduled to its success, retries included, by activity type.",
	"temporal_activity_task_error_total":                       "Activity tasks the worker could not handle.",
	"temporal_unregistered_activity_invocation_total":          "Activities requested that this worker does not register.",
	"temporal_local_activity_total_total":                      "Local activities run.",
	"temporal_local_activity_execution_failed_total":           "Local activity attempts that failed.",
	"temporal_local_activity_execution_latency_seconds":        "Time a local activity attempt ran.",
	"temporal_corrupted_signals_total":                         "Signals whose payload could not be decoded.",
	"temporal_worker_start_total":                              "Worker starts.",
	"temporal_worker_task_slots_available":                     "Free task slots, by worker type (WorkflowWorker, ActivityWorker).",
	"temporal_worker_task_slots_used":                          "Task slots in use, by worker type.",
	"temporal_poller_start_total":                              "Task pollers started.",
	"temporal_num_pollers":                                     "Task pollers running, by poller type and task queue.",
	"temporal_sticky_cache_hit_total":                          "Workflow tasks served from the sticky cache (no replay).",
	"temporal_sticky_cache_miss_total":                         "Workflow tasks that needed a replay because the workflow was not cached.",
	"temporal_sticky_cache_total_forced_eviction_total":        "Workflows evicted from the sticky cache to make room.",
	"temporal_sticky_cache_size":                               "Workflows held in the sticky cache.",
}

// sdkDefaultTags are the labels the SDK sets to "none" on metrics they do
// not apply to (a client RPC has no activity type): a series labelled
// activity_type="none" says nothing, so the label is dropped from it.
var sdkDefaultTags = map[string]bool{
	"activity_type": true, "workflow_type": true, "task_queue": true, "worker_type": true,
	"nexus_service": true, "nexus_operation": true,
}

// HelpFor is the HELP line of a metric family, also for one not in the
// table (a metric added by a newer SDK): it then names its source.
func HelpFor(name string) string {
	if h, ok := help[name]; ok {
		return h
	}
	if strings.HasPrefix(name, "temporal_") {
		return "Temporal Go SDK metric; see https://docs.temporal.io/references/sdk-metrics."
	}
	return name + " (no description; see docs/metrics.md)."
}

// tidyGatherer fills HELP lines and drops the SDK's "none" labels.
type tidyGatherer struct{ next prometheus.Gatherer }

func (g tidyGatherer) Gather() ([]*dto.MetricFamily, error) {
	families, err := g.next.Gather()
	for _, f := range families {
		if f.GetHelp() == "" || f.GetHelp() == f.GetName() {
			h := HelpFor(f.GetName())
			f.Help = &h
		}
		dropNoneLabels(f)
	}
	return families, err
}

// dropNoneLabels removes the SDK's "none" labels from a family's series,
// unless two series would then be the same: a scraper refuses duplicates,
// so such a family keeps its labels.
func dropNoneLabels(f *dto.MetricFamily) {
	kept := make([][]*dto.LabelPair, len(f.Metric))
	seen := map[string]bool{}
	for i, m := range f.Metric {
		var sig strings.Builder
		for _, l := range m.Label {
			if sdkDefaultTags[l.GetName()] && l.GetValue() == "none" {
				continue
			}
			kept[i] = append(kept[i], l)
			sig.WriteString(l.GetName() + "=" + l.GetValue() + "\xff")
		}
		if seen[sig.String()] {
			return
		}
		seen[sig.String()] = true
	}
	for i, m := range f.Metric {
		m.Label = kept[i]
	}
}
