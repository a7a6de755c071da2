package types

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBoundBuffersTurnsBadOnesIntoErrorsAndBoundsThePods(t *testing.T) {
	shape := Resources{MilliCPU: 500, Memory: GiB}
	in := []BufferObservation{
		{Namespace: "shop", Name: "negative", Pods: -3, Requests: shape},
		{Namespace: "shop", Name: "empty-shape", Pods: 2},
		{Namespace: "shop", Name: "neg-requests", Pods: 1, Requests: Resources{Memory: -1}},
		{Namespace: "shop", Name: "big", Pods: 900, Requests: shape},
		{Namespace: "shop", Name: "more", Pods: 300, Requests: shape},
		{Namespace: "", Name: "nameless", Pods: 1, Requests: shape},
		{Namespace: "shop", Name: "ctl\x00", Pods: 1, Requests: shape, Error: strings.Repeat("x", 5000)},
		{Namespace: "shop", Name: "selector", Pods: 1, Requests: shape,
			Scheduling: &PodScheduling{NodeSelector: map[string]string{"k": strings.Repeat("v", 20000)}}},
	}
	got, dropped := BoundBuffers(in)
	require.Zero(t, dropped)
	byKey := map[string]BufferObservation{}
	for _, b := range got {
		byKey[b.Key()] = b
	}
	assert.Equal(t, 0, byKey["shop/negative"].Pods)
	assert.Contains(t, byKey["shop/negative"].Error, "pods must be within [0, 1000], got -3")
	assert.Contains(t, byKey["shop/empty-shape"].Error, "asks for nothing")
	assert.Contains(t, byKey["shop/neg-requests"].Error, "must not be negative")
	assert.Contains(t, byKey["/nameless"].Error, "no namespace/name")
	assert.Equal(t, 900, byKey["shop/big"].Pods)
	// In key order big (900) and ctl (1) come first: 99 of "more"'s 300 fit.
	assert.Equal(t, 99, byKey["shop/more"].Pods)
	assert.Contains(t, byKey["shop/more"].Error, "keeps room for 99 of its 300 pods")
	assert.Contains(t, byKey["shop/selector"].Error, "scheduling constraints are")
	assert.Nil(t, byKey["shop/selector"].Scheduling, "a refused buffer keeps no constraints")
	ctl := byKey["shop/ctl"]
	assert.Equal(t, 1, ctl.Pods, "control characters are dropped, the buffer is kept")
	assert.LessOrEqual(t, len(ctl.Error), maxBufferError)

	total := 0
	for _, b := range got {
		total += b.Pods
	}
	assert.LessOrEqual(t, total, MaxBufferPods)
}

func TestBoundBuffersKeepsAtMostMaxBuffersInKeyOrder(t *testing.T) {
	var in []BufferObservation
	for i := range MaxBuffers + 5 {
		in = append(in, BufferObservation{Namespace: "ns", Name: fmt.Sprintf("b%03d", MaxBuffers+5-i), Pods: 1, Requests: Resources{MilliCPU: 1}})
	}
	in = append(in, in[0]) // a duplicate counts once
	got, dropped := BoundBuffers(in)
	assert.Len(t, got, MaxBuffers)
	assert.Equal(t, 5, dropped)
	assert.Equal(t, "ns/b001", got[0].Key())
	none, dropped := BoundBuffers(nil)
	assert.Nil(t, none)
	assert.Zero(t, dropped)
}
