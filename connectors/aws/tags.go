package aws

import (
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// Tags this package writes. The pool tag is the HIP's node pool label, so
// console users see the same key on groups, instances and nodes.
const (
	tagPool        = types.LabelPool
	tagSize        = "hanzo.ai/size"
	tagGroup       = "hanzo.ai/group"
	tagLaunchToken = "hanzo.ai/launch-token"
)

// bookkeepingTags are ours or AWS's, not labels the user asked for.
func isBookkeepingTag(k string) bool {
	return k == tagSize || k == tagGroup || k == tagLaunchToken || k == "Name" || strings.HasPrefix(k, "aws:")
}

// groupTags are the tags every new group carries: the user's labels, then
// the pool and size (which win over a user label of the same key).
func groupTags(labels map[string]string, poolLabel, size string) map[string]string {
	t := make(map[string]string, len(labels)+2)
	for k, v := range labels {
		t[k] = v
	}
	t[tagPool] = poolLabel
	t[tagSize] = size
	return t
}

// labelsFromTags keeps the tags that are labels.
func labelsFromTags(tags map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tags {
		if !isBookkeepingTag(k) {
			out[k] = v
		}
	}
	return out
}
