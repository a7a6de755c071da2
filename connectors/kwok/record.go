package kwok

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/hanzoai/visor-fleet/types"
)

// Labels the provider puts on its records and nodes.
const (
	// LabelGroup names the node group a record or node belongs to.
	LabelGroup = "kwok.visor.hanzo.ai/group"
	// LabelMachine is the machine's ID on its node.
	LabelMachine = "kwok.visor.hanzo.ai/machine"
	// recordKey is the ConfigMap key holding the group record.
	recordKey = "group.json"
)

// groupRecord is one node group as the provider keeps it, in a ConfigMap
// named by the group's ID.
type groupRecord struct {
	ID     string            `json:"id"`
	Name   string            `json:"name"`
	Size   string            `json:"size"`
	Pool   types.PoolKey     `json:"pool"`
	Labels map[string]string `json:"labels,omitempty"`
	Taints []types.Taint     `json:"taints,omitempty"`
	// Zone pins every machine of the group to one zone (NodeGroupSpec.Zone,
	// or the zone label the spec's labels carry); empty balances them.
	Zone string `json:"zone,omitempty"`
	// Request is the creating call's spec, so a key reused for another
	// request is refused instead of answered with the wrong group.
	Request string `json:"request"`
	// NextOrdinal numbers machines; an ordinal is never reused, so a
	// deleted machine's node name never comes back as another machine.
	NextOrdinal int       `json:"nextOrdinal"`
	Machines    []machine `json:"machines"`
}

// machine is one member of a group: launched at CreatedAt, its Node
// appears once the boot delay has passed.
type machine struct {
	// ID is also the Node's name.
	ID        string    `json:"id"`
	Zone      string    `json:"zone,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// groupID is derived from the creating call's idempotency key alone, so a
// retried create lands on the same record.
func groupID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "kwok-" + hex.EncodeToString(sum[:])[:12]
}

// zone is the zone the group is pinned to: its Zone, else the zone its
// labels name (records written before Zone); "" if none.
func (g *groupRecord) zone() string {
	if g.Zone != "" {
		return g.Zone
	}
	return g.Labels[corev1.LabelTopologyZone]
}

// grow adds machines until the group has target. A group pinned to a zone
// (NodeGroupSpec.Zone, or a topology.kubernetes.io/zone label) keeps
// every machine there;
// otherwise each goes to the zone the pool has fewest machines in, this
// group's and elsewhere's (the pool's other groups, by zone) together, as
// a cloud balances a pool's zones, the first such zone of zones on a tie.
func (g *groupRecord) grow(target int, zones []string, elsewhere map[string]int, now time.Time) {
	count := maps.Clone(elsewhere)
	if count == nil {
		count = map[string]int{}
	}
	for _, other := range g.Machines {
		count[other.Zone]++
	}
	pinned := g.zone()
	for len(g.Machines) < target {
		m := machine{ID: fmt.Sprintf("%s-%d", g.ID, g.NextOrdinal), CreatedAt: now}
		g.NextOrdinal++
		switch {
		case pinned != "":
			m.Zone = pinned
		case len(zones) > 0:
			m.Zone = zones[0]
			for _, z := range zones[1:] {
				if count[z] < count[m.Zone] {
					m.Zone = z
				}
			}
		}
		count[m.Zone]++
		g.Machines = append(g.Machines, m)
	}
}

// poolZones counts the machines of the pool's groups other than except,
// by zone.
func (p *Provider) poolZones(ctx context.Context, pool types.PoolKey, except string) (map[string]int, error) {
	records, err := p.listRecords(ctx, LabelGroup+","+types.LabelPool+"="+pool.NodePoolLabel())
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, g := range records {
		if g.ID == except || g.Pool != pool {
			continue
		}
		for _, m := range g.Machines {
			out[m.Zone]++
		}
	}
	return out, nil
}

// shrink removes the newest machines until the group has target and
// returns their IDs.
func (g *groupRecord) shrink(target int) []string {
	var gone []string
	for len(g.Machines) > target {
		last := g.Machines[len(g.Machines)-1]
		gone = append(gone, last.ID)
		g.Machines = g.Machines[:len(g.Machines)-1]
	}
	return gone
}

// remove drops the machines named (by ID, which is also the node name)
// and returns the IDs it removed.
func (g *groupRecord) remove(names []string) []string {
	doomed := map[string]bool{}
	for _, n := range names {
		doomed[n] = true
	}
	var gone []string
	kept := g.Machines[:0]
	for _, m := range g.Machines {
		if doomed[m.ID] {
			gone = append(gone, m.ID)
			continue
		}
		kept = append(kept, m)
	}
	g.Machines = kept
	return gone
}

func (p *Provider) configMap(g *groupRecord) (*corev1.ConfigMap, error) {
	b, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{LabelGroup: g.ID}
	for k, v := range g.Pool.NodeLabels() {
		labels[k] = v
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: g.ID, Namespace: p.cfg.namespace(), Labels: labels},
		Data:       map[string]string{recordKey: string(b)},
	}, nil
}

func decodeRecord(cm *corev1.ConfigMap) (*groupRecord, error) {
	var g groupRecord
	if err := json.Unmarshal([]byte(cm.Data[recordKey]), &g); err != nil {
		return nil, fmt.Errorf("group record %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	if g.ID != cm.Name {
		return nil, fmt.Errorf("group record %s/%s names group %q", cm.Namespace, cm.Name, g.ID)
	}
	return &g, nil
}

// readRecord reads one group's record.
func (p *Provider) readRecord(ctx context.Context, id string) (*groupRecord, *corev1.ConfigMap, error) {
	cm, err := p.client.CoreV1().ConfigMaps(p.cfg.namespace()).Get(ctx, id, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	g, err := decodeRecord(cm)
	return g, cm, err
}

// recordBackoff spreads up to ten writers of one record over about 2 s.
var recordBackoff = wait.Backoff{Steps: 10, Duration: 10 * time.Millisecond, Factor: 1.8, Jitter: 0.5}

// updateRecord reads the record, applies change and writes it back,
// again on a conflict with another writer. A pool deletes several nodes
// of one group at once, so the retries back off rather than spin.
func (p *Provider) updateRecord(ctx context.Context, id string, change func(*groupRecord) error) (*groupRecord, error) {
	var out *groupRecord
	err := retry.RetryOnConflict(recordBackoff, func() error {
		g, cm, err := p.readRecord(ctx, id)
		if err != nil {
			return err
		}
		if err := change(g); err != nil {
			return err
		}
		next, err := p.configMap(g)
		if err != nil {
			return err
		}
		cm.Data = next.Data
		if _, err := p.client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return err
		}
		out = g
		return nil
	})
	return out, err
}

// listRecords lists the records matching selector ("" for all).
func (p *Provider) listRecords(ctx context.Context, selector string) ([]*groupRecord, error) {
	if selector == "" {
		selector = LabelGroup
	}
	list, err := p.client.CoreV1().ConfigMaps(p.cfg.namespace()).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	out := make([]*groupRecord, 0, len(list.Items))
	for i := range list.Items {
		g, err := decodeRecord(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}
