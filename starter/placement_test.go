package starter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
)

func eastStatus() contract.ClusterStatus {
	return contract.ClusterStatus{
		Declared: contract.ClusterDeclared{ID: "east", Region: "us-east", Residency: "us-only"},
		Observed: contract.ClusterObserved{Capabilities: contract.Capabilities{MIG: true, RDMA: true}, LastReportAt: time.Now()},
	}
}

func TestPlacementMismatchNamesEachField(t *testing.T) {
	cases := []struct {
		name string
		p    contract.Placement
		want []string
	}{
		{"fits", contract.Placement{Regions: []string{"eu-central", "us-east"}, Residency: "us-only", Capabilities: []string{"mig", "rdma"}}, nil},
		{"no constraints", contract.Placement{}, nil},
		{"region", contract.Placement{Regions: []string{"eu-central", "eu-west"}},
			[]string{`placement.regions: the pool allows eu-central, eu-west; cluster east is in region "us-east"`}},
		{"residency", contract.Placement{Residency: "gdpr"},
			[]string{`placement.residency: the pool requires "gdpr"; cluster east declares "us-only"`}},
		{"capability", contract.Placement{Capabilities: []string{"mig", "nvlink"}},
			[]string{"placement.capabilities: the pool requires mig, nvlink; cluster east does not report nvlink (it reports mig, rdma)"}},
		{"all three", contract.Placement{Regions: []string{"ap-south"}, Residency: "gdpr", Capabilities: []string{"nvlink"}},
			[]string{"placement.regions", "placement.residency", "placement.capabilities"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := PlacementMismatch(tc.p, eastStatus())
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

func TestPlacementOnAClusterThatDeclaresOrReportsNothing(t *testing.T) {
	st := contract.ClusterStatus{Declared: contract.ClusterDeclared{ID: "bare"}}
	err := PlacementMismatch(contract.Placement{Regions: []string{"us-east"}, Residency: "gdpr", Capabilities: []string{"rdma"}}, st)
	require.ErrorContains(t, err, "cluster bare is in region none")
	require.ErrorContains(t, err, "cluster bare declares none")
	require.ErrorContains(t, err, "it reports nothing yet: its agent has not reported")
}
