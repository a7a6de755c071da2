package workers

import (
	"context"
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func TestStaticClustersResolveOrNameWhatTheyKnow(t *testing.T) {
	s := StaticClusters{"west": {ID: "west"}, "east": {ID: "east"}}
	c, err := s.Cluster(context.Background(), "east")
	if err != nil || c.ID != "east" {
		t.Fatalf("east: %+v, %v", c, err)
	}
	c, err = s.Cluster(context.Background(), "north")
	if !errclass.IsPermanent(err) {
		t.Fatalf("an unknown cluster must be Permanent (no retry can configure it): %v", err)
	}
	if !strings.Contains(err.Error(), `"north"`) || !strings.Contains(err.Error(), "east, west") {
		t.Fatalf("error %v should name the cluster and the known ones in order", err)
	}
	if c != (connectors.Cluster{}) {
		t.Fatalf("a miss returned %+v", c)
	}
}
