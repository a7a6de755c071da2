package kubernetes_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
)

var metaCreate = metav1.CreateOptions{}

// requestCounter counts the API requests a client makes, as the API
// server's apiserver_request_total would, split into watches and the rest.
type requestCounter struct {
	requests, watches, bytes atomic.Int64
}

// countingBody counts the response bytes the client reads.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func (c *requestCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			c.requests.Add(1)
			if q := req.URL.Query(); q.Get("watch") == "true" || q.Get("watch") == "1" {
				c.watches.Add(1)
			}
			resp, err := rt.RoundTrip(req)
			if resp != nil && resp.Body != nil {
				resp.Body = countingBody{resp.Body, &c.bytes}
			}
			return resp, err
		})
	})
	return cfg
}

// The informer mode makes a handful of requests however many samples it
// serves, where list mode pages through every pod at every sample; both
// give the same observation of the same cluster.
func TestIntegrationInformerObserverMakesFarFewerRequestsWithTheSameObservation(t *testing.T) {
	const (
		nodes          = 20
		boundPerNode   = 80 // 1,600 bound pods
		pending        = 800
		unschedulable  = 400 // of the pending ones, marked by "the scheduler"
		samples        = 10
		sampleInterval = 30 * time.Second // the watcher's default cadence
	)
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	e.ctx = ctx
	api := e.poolOf("api")
	since := time.Now().Add(-2 * time.Minute).Truncate(time.Second)

	fast := rest.CopyConfig(e.cluster.AdminConfig)
	fast.QPS, fast.Burst = 1000, 1000
	admin := mustClient(t, fast)
	var nodeNames []string
	for i := range nodes {
		nodeNames = append(nodeNames, e.node(fmt.Sprintf("n%02d", i), withPool(api, nil)))
	}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range nodes * boundPerNode {
		g.Go(func() error {
			p := kubeapi.Pod(e.ns, fmt.Sprintf("bound-%04d", i), "10m", "16Mi", nil)
			p.Spec.NodeName = nodeNames[i%nodes]
			_, err := admin.CoreV1().Pods(e.ns).Create(gctx, p, metaCreate)
			return err
		})
	}
	tenant := map[string]string{types.LabelOrg: api.Org, types.LabelProject: api.Project, types.LabelService: api.Service}
	for i := range pending {
		g.Go(func() error {
			name := fmt.Sprintf("pend-%04d", i)
			if _, err := admin.CoreV1().Pods(e.ns).Create(gctx, kubeapi.Pod(e.ns, name, "1", "1Gi", tenant), metaCreate); err != nil {
				return err
			}
			if i >= unschedulable {
				return nil
			}
			return kubeapi.MarkUnschedulable(gctx, admin, e.ns, name, since, "0/20 nodes are available")
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("fixtures: %v", err)
	}
	t.Logf("created %d nodes and %d pods in %s", nodes, nodes*boundPerNode+pending, time.Since(start).Round(time.Millisecond))

	at := time.Now()
	cfg := kubernetes.Config{Cluster: "it", Provider: "do", Now: func() time.Time { return at }}
	observeN := func(o *kubernetes.Observer) connectors.ClusterObservation {
		t.Helper()
		var last connectors.ClusterObservation
		for range samples {
			obs, err := o.ObserveCluster(ctx)
			if err != nil {
				t.Fatalf("ObserveCluster: %v", err)
			}
			last = obs
		}
		return last
	}

	var listed requestCounter
	listStart := time.Now()
	fromLists := observeN(kubernetes.NewObserver(mustClient(t, listed.wrap(e.cluster.ConnectorConfig)), cfg))
	listTime := time.Since(listStart)

	var watched requestCounter
	cfg.Informers = true
	informed := kubernetes.NewObserver(mustClient(t, watched.wrap(e.cluster.ConnectorConfig)), cfg)
	defer informed.Close(ctx)
	cacheStart := time.Now()
	fromCache := observeN(informed)
	cacheTime := time.Since(cacheStart)

	got, want := fromCache.Pools[api.WorkflowID()], fromLists.Pools[api.WorkflowID()]
	if len(want.Nodes) != nodes || len(want.PendingPods) != unschedulable {
		t.Fatalf("list mode saw %d nodes and %d pending pods, want %d and %d", len(want.Nodes), len(want.PendingPods), nodes, unschedulable)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("informer observation of %s differs from the list one:\ninformer: %d nodes, %d pending\nlist:     %d nodes, %d pending",
			api.WorkflowID(), len(got.Nodes), len(got.PendingPods), len(want.Nodes), len(want.PendingPods))
	}

	perMinute := float64(time.Minute / sampleInterval)
	l, w := listed.requests.Load(), watched.requests.Load()
	t.Logf("%d samples: list mode %d requests, %d KiB read, in %s (%.1f requests/sample, %.0f/min at one sample per %s); informer mode %d requests (%d watches), %d KiB read, in %s",
		samples, l, listed.bytes.Load()>>10, listTime.Round(time.Millisecond), float64(l)/samples, float64(l)/samples*perMinute, sampleInterval,
		w, watched.watches.Load(), watched.bytes.Load()>>10, cacheTime.Round(time.Millisecond))
	if minList := int64(samples * (1 + (nodes*boundPerNode+pending)/500)); l < minList {
		t.Errorf("list mode made %d requests over %d samples, want at least %d (a node list and every pod page per sample)", l, samples, minList)
	}
	// Two informers: at most a list and a watch each, whatever the samples.
	if w > 4 || w*20 > l {
		t.Errorf("informer mode made %d requests over %d samples, want at most 4 and far fewer than list mode's %d", w, samples, l)
	}

	// The cache follows the cluster: a pod the scheduler gives up on shows.
	if _, err := admin.CoreV1().Pods(e.ns).Create(ctx, kubeapi.Pod(e.ns, "late", "1", "1Gi", tenant), metaCreate); err != nil {
		t.Fatal(err)
	}
	if err := kubeapi.MarkUnschedulable(ctx, admin, e.ns, "late", since, "0/20 nodes are available"); err != nil {
		t.Fatal(err)
	}
	e.eventually("the late pod in the informer observation", func() bool {
		obs, err := informed.ObserveCluster(ctx)
		return err == nil && hasPending(obs.Pools[api.WorkflowID()].PendingPods, "late")
	})
	if w := watched.requests.Load(); w > 4 {
		t.Errorf("informer mode made %d requests after following a change, want still at most 4", w)
	}
}

func hasPending(pods []types.PendingPod, name string) bool {
	for _, p := range pods {
		if p.Name == name {
			return true
		}
	}
	return false
}
