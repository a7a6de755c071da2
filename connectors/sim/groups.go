package sim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// maxGroupTarget is the sim's per-group quota: it keeps a runaway target
// from allocating thousands of fake nodes, as a real account quota would.
const maxGroupTarget = 200

// simState is the cloud side of the fleet; Kubernetes objects live in the
// clientset. Both are persisted together.
type simState struct {
	NextID int64                  `json:"nextID"`
	Groups map[string]*nodeGroup  `json:"groups"`
	Keys   map[string]appliedKey  `json:"appliedKeys"`
	Demand map[string]*poolDemand `json:"demand"` // by pool node label
	// Leaked are machines tagged for a pool that no group records.
	Leaked []*leakedMachine `json:"leaked,omitempty"`
	// History is every group machine that ended, oldest first, for the
	// truth a test checks the meter against (Inventory); it keeps the
	// last maxHistory, and HistoryFrom is the end time of the newest one
	// dropped (zero: none was).
	History     []endedMachine `json:"history,omitempty"`
	HistoryFrom time.Time      `json:"historyFrom,omitzero"`
	// Notices are the spot interruption notices sent (interruptions.go).
	Notices []simNotice `json:"notices,omitempty"`
	// Refusals are the launches refused for want of capacity, oldest
	// first (offering_faults.go).
	Refusals []CapacityRefusal `json:"refusals,omitempty"`
}

// endedMachine is a group machine the sim terminated, with when.
type endedMachine struct {
	Pool    types.PoolKey `json:"pool"`
	GroupID string        `json:"groupID"`
	Size    string        `json:"size"`
	Machine machine       `json:"machine"`
	EndedAt time.Time     `json:"endedAt"`
}

// How much of its terminated machines the sim reports and keeps: a group
// lists those of the last endedRetention (at most maxEndedPerGroup), as a
// cloud lists recently terminated instances for a while; the history for
// tests keeps the last maxHistory.
const (
	endedRetention   = 3 * time.Hour
	maxEndedPerGroup = 200
	maxHistory       = 20000
)

func newSimState() simState {
	return simState{Groups: map[string]*nodeGroup{}, Keys: map[string]appliedKey{}, Demand: map[string]*poolDemand{}}
}

type nodeGroup struct {
	ID     string            `json:"id"`
	Name   string            `json:"name"`
	Size   string            `json:"size"`
	Pool   types.PoolKey     `json:"pool"`
	Labels map[string]string `json:"labels"`
	Taints []types.Taint     `json:"taints,omitempty"`
	Target int               `json:"target"`
	// CapacityType and Zone are what the group was created with.
	CapacityType types.CapacityType `json:"capacityType,omitempty"`
	Zone         string             `json:"zone,omitempty"`
	Machines     []*machine         `json:"machines"` // oldest first
	// Ended are the group's machines terminated recently, oldest first.
	Ended []endedMachine `json:"ended,omitempty"`
}

// machine is one instance; Node is the Kubernetes node name it registers as.
type machine struct {
	ID        string    `json:"id"`
	Node      string    `json:"node"`
	CreatedAt time.Time `json:"createdAt"`
	// Ready: the machine has booted (its node turned Ready at ReadyAt);
	// a node that later goes NotReady still has a running machine.
	Ready   bool      `json:"ready"`
	ReadyAt time.Time `json:"readyAt,omitzero"`
	// Fault is what was drawn for it at launch, persisted so a restarted
	// fleet keeps its promises.
	Fault MachineFault `json:"fault,omitempty"`
	// InterruptAt is when a spot machine will be warned it goes (zero:
	// never); NoticeID and Deadline are the warning once sent.
	InterruptAt time.Time `json:"interruptAt,omitzero"`
	NoticeID    string    `json:"noticeID,omitempty"`
	Deadline    time.Time `json:"deadline,omitzero"`
}

// leakedMachine was launched for a pool's group but never recorded in it.
type leakedMachine struct {
	Pool    types.PoolKey `json:"pool"`
	Size    string        `json:"size"`
	Machine *machine      `json:"machine"`
}

func (m *machine) instance() connectors.Instance {
	state := connectors.InstanceCreating
	if m.Ready {
		state = connectors.InstanceRunning
	}
	return connectors.Instance{ID: m.ID, Name: m.Node, State: state, CreatedAt: m.CreatedAt}
}

func (g *nodeGroup) view() connectors.NodeGroup {
	v := connectors.NodeGroup{
		ID: g.ID, Name: g.Name, Size: g.Size, TargetSize: g.Target,
		CapacityType: g.CapacityType, Zone: g.Zone,
		Instances: make([]connectors.Instance, 0, len(g.Machines)),
		Labels:    make(map[string]string, len(g.Labels)),
	}
	for k, val := range g.Labels {
		v.Labels[k] = val
	}
	for _, m := range g.Machines {
		v.Instances = append(v.Instances, m.instance())
	}
	for _, e := range g.Ended {
		inst := e.Machine.instance()
		inst.EndedAt = e.EndedAt
		v.Ended = append(v.Ended, inst)
	}
	return v
}

// machineIndex finds a machine by node name or instance ID: a machine that
// never registered is known by either.
func (g *nodeGroup) machineIndex(node string) int {
	for i, m := range g.Machines {
		if m.Node == node || m.ID == node {
			return i
		}
	}
	return -1
}

func (f *Fleet) nextID() int64 {
	f.st.NextID++
	f.touch()
	return f.st.NextID
}

// sortedGroups returns groups in ID order so every walk is deterministic.
func (f *Fleet) sortedGroups() []*nodeGroup {
	gs := make([]*nodeGroup, 0, len(f.st.Groups))
	for _, g := range f.st.Groups {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].ID < gs[j].ID })
	return gs
}

func (f *Fleet) groupOfNode(node string) *nodeGroup {
	for _, g := range f.st.Groups {
		if g.machineIndex(node) >= 0 {
			return g
		}
	}
	return nil
}

// reconcileGroup launches or removes machines until the group has its
// target, newest removed first, as the cloud's group controller would.
func (f *Fleet) reconcileGroup(ctx context.Context, g *nodeGroup, now time.Time) error {
	var errs []error
	for len(g.Machines) < g.Target {
		m := f.newMachine(g, now)
		m.Fault = f.machineFate()
		f.drawInterruption(g, m, now)
		g.Machines = append(g.Machines, m)
		if f.leaksOnLaunch() {
			f.st.Leaked = append(f.st.Leaked, &leakedMachine{Pool: g.Pool, Size: g.Size, Machine: f.newMachine(g, now)})
		}
		if m.Fault == NeverJoins {
			continue
		}
		// A failed registration is retried by Step, like a kubelet retrying.
		errs = append(errs, f.registerNode(ctx, g, m))
	}
	for len(g.Machines) > g.Target {
		errs = append(errs, f.removeMachine(ctx, g, len(g.Machines)-1))
	}
	return errors.Join(errs...)
}

func (f *Fleet) newMachine(g *nodeGroup, now time.Time) *machine {
	n := f.nextID()
	return &machine{ID: fmt.Sprintf("i-%06d", n), Node: fmt.Sprintf("%s-%d", g.Name, n), CreatedAt: now}
}

// removeMachine terminates a machine: its Node object goes, and the pods
// bound to it go with it, as the pod garbage collector does.
func (f *Fleet) removeMachine(ctx context.Context, g *nodeGroup, i int) error {
	m := g.Machines[i]
	g.Machines = append(g.Machines[:i], g.Machines[i+1:]...)
	f.noteEnded(g, m, f.cfg.Clock())
	f.touch()
	return f.deleteNode(ctx, m.Node)
}

// noteEnded records a group machine's termination in the group's recent
// list and in the history.
func (f *Fleet) noteEnded(g *nodeGroup, m *machine, now time.Time) {
	e := endedMachine{Pool: g.Pool, GroupID: g.ID, Size: g.Size, Machine: *m, EndedAt: now}
	g.Ended = append(g.Ended, e)
	drop := 0
	for drop < len(g.Ended) && (len(g.Ended)-drop > maxEndedPerGroup || g.Ended[drop].EndedAt.Before(now.Add(-endedRetention))) {
		drop++
	}
	g.Ended = g.Ended[drop:]
	f.st.History = append(f.st.History, e)
	if over := len(f.st.History) - maxHistory; over > 0 {
		f.st.HistoryFrom = f.st.History[over-1].EndedAt
		f.st.History = append([]endedMachine(nil), f.st.History[over:]...)
	}
}
