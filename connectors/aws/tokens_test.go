package aws

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

var printableASCII = regexp.MustCompile(`^[\x21-\x7e]+$`)

func TestClientTokenIsDeterministicAndBounded(t *testing.T) {
	key := connectors.IdempotencyKey("pool/acme/shop/api/aws/prod-1/decision/12")
	tok := ClientToken(key, "group-a", 0)
	assert.Equal(t, tok, ClientToken(key, "group-a", 0), "same inputs, same token")
	assert.LessOrEqual(t, len(tok), maxTokenLen)
	assert.Regexp(t, printableASCII, tok)

	long := connectors.IdempotencyKey(strings.Repeat("k", 10_000))
	assert.LessOrEqual(t, len(ClientToken(long, strings.Repeat("s", 500), 1<<30)), maxTokenLen)
}

func TestClientTokenDiffersByKeyScopeAndOrdinal(t *testing.T) {
	seen := map[string]string{}
	for _, key := range []connectors.IdempotencyKey{"k1", "k2", "k10"} {
		for _, scope := range []string{"g1", "g2", ""} {
			for ordinal := 0; ordinal < 50; ordinal++ {
				tok := ClientToken(key, scope, ordinal)
				id := string(key) + "|" + scope + "|" + string(rune('0'+ordinal))
				if prev, dup := seen[tok]; dup {
					t.Fatalf("token collision between %s and %s", prev, id)
				}
				seen[tok] = id
			}
		}
	}
	// Separators keep shifted boundaries apart.
	assert.NotEqual(t, ClientToken("ab", "c", 0), ClientToken("a", "bc", 0))
	assert.NotEqual(t, ClientToken("a", "b1", 0), ClientToken("a", "b", 10))
}

func TestGroupName(t *testing.T) {
	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "aws", Cluster: "prod-1"}
	spec := connectors.NodeGroupSpec{Pool: pool, Size: "m6i.large"}
	name := GroupName(spec, "k1")
	assert.Equal(t, name, GroupName(spec, "k1"))
	assert.NotEqual(t, name, GroupName(spec, "k2"))
	assert.True(t, strings.HasPrefix(name, "acme-shop-api-aws-m6i-large-"), name)
	assert.Regexp(t, `^[A-Za-z0-9][A-Za-z0-9-]{0,62}$`, name)

	spec.Name = "gpu pool/ñ"
	assert.Regexp(t, `^gpu-pool-[0-9a-f]{10}$`, GroupName(spec, "k1"))

	long := types.PoolKey{Org: strings.Repeat("o", 63), Project: strings.Repeat("p", 63), Service: "s", Provider: "aws", Cluster: "c"}
	n1 := GroupName(connectors.NodeGroupSpec{Pool: long, Size: "m6i.large"}, "k1")
	n2 := GroupName(connectors.NodeGroupSpec{Pool: long, Size: "m6i.large"}, "k2")
	assert.LessOrEqual(t, len(n1), maxGroupNameLen)
	assert.NotEqual(t, n1, n2, "truncation keeps the key hash")
}
