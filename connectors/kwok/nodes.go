package kwok

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// kwok's conventions for the nodes it manages: it takes the nodes carrying
// the annotation (its --manage-nodes-with-annotation-selector), and its
// examples label them type=kwok.
const (
	AnnotationKwokNode = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"
	labelType          = "type"
	typeKwok           = "kwok"
	// ManageSelector is the selector to start kwok with.
	ManageSelector = AnnotationKwokNode + "=" + kwokNodeValue
)

// providerIDPrefix marks the nodes this provider owns, as aws:// does.
const providerIDPrefix = "kwok://"

// nodeObject is machine m of group g as the Node kwok will manage: the
// labels, taints and allocatable sizing's node template for the size and
// zone promises, so a pod planned onto the size fits its node.
func (p *Provider) nodeObject(g *groupRecord, m machine) (*corev1.Node, error) {
	t, ok := p.catalog[g.Size]
	if !ok {
		return nil, fmt.Errorf("group %s is of size %q, which the kwok catalog does not have", g.ID, g.Size)
	}
	tmpl := templateFor(t, m.Zone, p.cfg.Region, g)
	labels := maps.Clone(tmpl.Labels)
	labels[corev1.LabelHostname] = m.ID
	labels[labelType] = typeKwok
	labels[LabelGroup] = g.ID
	labels[LabelMachine] = m.ID
	node := tmpl.Node()
	node.ObjectMeta = metav1.ObjectMeta{
		Name: m.ID, Labels: labels,
		Annotations: map[string]string{AnnotationKwokNode: kwokNodeValue, "node.alpha.kubernetes.io/ttl": "0"},
	}
	node.Spec.ProviderID = providerIDPrefix + m.ID
	node.Status.Capacity = t.Capacity().ResourceList()
	node.Status.Allocatable = t.Allocatable().ResourceList()
	return node, nil
}

// templateFor is sizing's template of size t in zone and region for the
// group's declared labels (which include the pool's identity) and taints.
func templateFor(t types.InstanceType, zone, region string, g *groupRecord) sizing.NodeTemplate {
	templates := sizing.Templates(t, sizing.TemplateOptions{Labels: g.Labels, Taints: g.Taints, Region: region})
	for _, nt := range templates {
		if nt.Zone == zone {
			return nt
		}
	}
	// A zone the catalog no longer lists: the machine stays where it is.
	nt := templates[0]
	nt.Labels = maps.Clone(nt.Labels)
	nt.Labels[corev1.LabelTopologyZone] = zone
	return nt
}

// listNodes is the provider's nodes matching selector, by name.
func (p *Provider) listNodes(ctx context.Context, selector string) (map[string]*corev1.Node, error) {
	list, err := p.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*corev1.Node, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

// deleteNodes deletes the named nodes; one already gone is success.
func (p *Provider) deleteNodes(ctx context.Context, names []string) error {
	var errs []error
	for _, name := range names {
		err := p.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete node %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
