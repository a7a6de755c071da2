package hetzner

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPoolLabelValueFitsHetznerLabels(t *testing.T) {
	assert.Equal(t, "acme.shop.api.hetzner", poolLabelValue("acme.shop.api.hetzner"))
	long := strings.Repeat("a", 40) + "." + strings.Repeat("b", 40) + ".svc.hetzner"
	v := poolLabelValue(long)
	assert.Regexp(t, labelValueRE, v)
	assert.LessOrEqual(t, len(v), 63)
	assert.NotEqual(t, v, poolLabelValue(long+"x"), "still unique")
}

func TestGroupIDRoundTripsAndMembersAreDistinct(t *testing.T) {
	g, err := parseGroupID(GroupID("acme.shop.api.hetzner", "cpx31"))
	require.NoError(t, err)
	assert.Equal(t, group{nodePoolLabel: "acme.shop.api.hetzner", size: "cpx31"}, g)
	a, b := g.member("k", 0), g.member("k", 1)
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, g.member("k", 0), "deterministic")
	assert.NotEqual(t, a, g.member("k2", 0))
	for _, m := range []member{a, b} {
		assert.Regexp(t, `^[0-9a-f]{8}-cpx31-[0-9a-f]{10}$`, m.name)
		assert.Regexp(t, labelValueRE, m.keyLabel)
	}
	for _, bad := range []string{"", "/cx22", "pool", "pool/", "pool/CX22", "pool/cx_22"} {
		_, err := parseGroupID(bad)
		assert.Error(t, err, bad)
	}
}

func TestRateLimitWaitFromTheDocumentedBucket(t *testing.T) {
	now := time.Now()
	resp := func(retryAfter string, limit int, reset time.Duration) *hcloud.Response {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		r := &hcloud.Response{Response: &http.Response{Header: h}}
		r.Meta.Ratelimit = hcloud.Ratelimit{Limit: limit, Reset: now.Add(reset)}
		return r
	}
	assert.Equal(t, 9*time.Second, rateLimitWait(resp("9", 3600, time.Hour), now), "Retry-After wins")
	assert.Equal(t, time.Second, rateLimitWait(resp("", 3600, time.Hour), now), "3600/h refills one a second")
	assert.Equal(t, 2*time.Second, rateLimitWait(resp("", 720, 2*time.Second), now), "bounded by the full reset")
	assert.Equal(t, defaultRateLimitWait, rateLimitWait(resp("", 0, 0), now), "no headers")
}
