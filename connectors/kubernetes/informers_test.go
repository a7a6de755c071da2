package kubernetes

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
)

// The informer cache feeds the same grouping as the lists: the same
// cluster gives the same observation and the same malformed nodes, and
// samples after the first list nothing.
func TestInformerModeObservesWhatListModeDoes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listClient, _ := kubefake.NewClientset(kubefake.Options{}, clusterWithTenants()...)
	byLists := NewObserver(listClient, observerConfig(nil))
	want, err := byLists.ObserveCluster(ctx)
	require.NoError(t, err)

	cacheClient, _ := kubefake.NewClientset(kubefake.Options{}, clusterWithTenants()...)
	cfg := observerConfig(nil)
	cfg.Informers = true
	fromCache := NewObserver(cacheClient, cfg)
	defer fromCache.Close(ctx)
	got, err := fromCache.ObserveCluster(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, byLists.MalformedNodes(), fromCache.MalformedNodes())

	before := len(cacheClient.Actions())
	for range 5 {
		_, err := fromCache.ObserveCluster(ctx)
		require.NoError(t, err)
	}
	var lists []k8stesting.Action
	for _, a := range cacheClient.Actions()[before:] {
		if a.GetVerb() == "list" {
			lists = append(lists, a)
		}
	}
	assert.Empty(t, lists, "samples from the cache list nothing")
}

func TestObserverCloseWithoutInformersIsANoOp(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{})
	require.NoError(t, NewObserver(client, observerConfig(nil)).Close(context.Background()))
}

// A cache whose watch is refused fails samples with the refusal, Permanent,
// instead of serving the one list it got.
func TestInformerModeFailsWhileTheWatchIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, _ := kubefake.NewClientset(kubefake.Options{}, clusterWithTenants()...)
	client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "", errors.New("no watch verb"))
	})
	cfg := observerConfig(nil)
	cfg.Informers = true
	o := NewObserver(client, cfg)
	defer o.Close(ctx)

	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err = o.ObserveCluster(ctx); err != nil {
			break
		}
	}
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
	assert.Equal(t, errclass.Permanent, errclass.Of(err))
	assert.Contains(t, err.Error(), "watch pods")
}
