package metering

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var mt0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func mat(d time.Duration) time.Time { return mt0.Add(d) }

func TestMachinesBillCreationToEnd(t *testing.T) {
	var m Machines
	// a launched 10:10, seen at 10:15; b launched 10:20 and ended 10:21:05
	// between two reads; a ended 10:50, reported at 11:05.
	_, err := m.Take(mat(15*time.Minute), []MachineRun{{ID: "a", Size: "s", Created: mat(10 * time.Minute)}}, nil)
	require.NoError(t, err)
	require.False(t, m.Covers(mat(time.Hour)))
	_, err = m.Take(mat(65*time.Minute), nil, []MachineRun{
		{ID: "a", Size: "s", Created: mat(10 * time.Minute), Ended: mat(50 * time.Minute)},
		{ID: "b", Size: "s", Created: mat(20 * time.Minute), Ended: mat(21*time.Minute + 5*time.Second)},
	})
	require.NoError(t, err)
	require.True(t, m.Covers(mat(time.Hour)))
	require.Equal(t, map[string]float64{"s": (40*time.Minute + 65*time.Second).Hours()}, m.NodeHours(mt0))
	require.Empty(t, m.NodeHours(mat(time.Hour)))
}

func TestMachinesEndedReportedAgainCountsOnce(t *testing.T) {
	var m Machines
	ended := []MachineRun{{ID: "b", Size: "s", Created: mat(5 * time.Minute), Ended: mat(35 * time.Minute)}}
	live := []MachineRun{{ID: "a", Size: "s", Created: mat(0)}}
	for _, read := range []time.Duration{40 * time.Minute, 50 * time.Minute, 61 * time.Minute} {
		_, err := m.Take(mat(read), live, ended)
		require.NoError(t, err)
	}
	require.InDelta(t, 1.5, m.NodeHours(mt0)["s"], 1e-12)
	m.Prune(mat(time.Hour))
	require.Empty(t, m.Ended)
	// After the hour is billed the provider still reports b: nothing new.
	_, err := m.Take(mat(70*time.Minute), live, ended)
	require.NoError(t, err)
	require.Empty(t, m.Ended)
	require.InDelta(t, 10.0/60, m.NodeHours(mat(time.Hour))["s"], 1e-12)
}

func TestMachinesWithoutEndBillToFirstReadWithout(t *testing.T) {
	var m Machines
	_, err := m.Take(mat(10*time.Minute), []MachineRun{{ID: "a", Size: "s"}}, nil)
	require.NoError(t, err)
	_, err = m.Take(mat(40*time.Minute), nil, nil)
	require.NoError(t, err)
	require.Len(t, m.Ended, 1)
	require.True(t, m.Ended[0].Estimated)
	// No creation time: from the first read listing it.
	require.InDelta(t, 0.5, m.NodeHours(mt0)["s"], 1e-12)
	// The provider reports the end later: taken, within the unbilled time.
	_, err = m.Take(mat(45*time.Minute), nil, []MachineRun{{ID: "a", Size: "s", Ended: mat(30 * time.Minute)}})
	require.NoError(t, err)
	require.False(t, m.Ended[0].Estimated)
	require.InDelta(t, 20.0/60, m.NodeHours(mt0)["s"], 1e-12)
}

func TestMachinesIgnoreOlderReadsAndBadInput(t *testing.T) {
	var m Machines
	_, err := m.Take(mat(10*time.Minute), []MachineRun{{ID: "a", Size: "s", Created: mat(0)}}, nil)
	require.NoError(t, err)
	_, err = m.Take(mat(5*time.Minute), nil, nil)
	require.NoError(t, err)
	require.Len(t, m.Live, 1, "an older read changes nothing")
	_, err = m.Take(time.Time{}, nil, nil)
	require.Error(t, err)
	require.Len(t, m.Live, 1)
	require.Equal(t, mat(10*time.Minute), m.Seen)
	// A bad entry is left out; the rest of the read counts.
	a := MachineRun{ID: "a", Size: "s", Created: mat(0)}
	_, err = m.Take(mat(20*time.Minute), []MachineRun{a, {ID: "", Size: "s"}}, nil)
	require.ErrorContains(t, err, "no ID")
	_, err = m.Take(mat(30*time.Minute), []MachineRun{a, {ID: "x", Size: "a/b"}}, nil)
	require.ErrorContains(t, err, "machine x")
	require.Len(t, m.Live, 1)
	require.Equal(t, mat(30*time.Minute), m.Seen)
}

func TestMachinesBoundEnded(t *testing.T) {
	var m Machines
	var ended []MachineRun
	for i := range MaxEndedSpans + 5 {
		ended = append(ended, MachineRun{ID: "m" + strconv.Itoa(i), Size: "s", Created: mat(0), Ended: mat(time.Duration(i+1) * time.Millisecond)})
	}
	dropped, err := m.Take(mat(time.Minute), nil, ended)
	require.NoError(t, err)
	require.Equal(t, 5, dropped)
	require.Len(t, m.Ended, MaxEndedSpans)
}

func TestMachinesLiveCountToTheNewestRead(t *testing.T) {
	var m Machines
	_, err := m.Take(mat(30*time.Minute), []MachineRun{{ID: "a", Size: "s", Created: mat(-2 * time.Hour)}, {ID: "b", Size: "t", Created: mat(20 * time.Minute)}}, nil)
	require.NoError(t, err)
	require.Equal(t, map[string]float64{"s": 0.5, "t": (10 * time.Minute).Hours()}, m.NodeHours(mt0), "machines run up to the newest read")
	_, err = m.Take(mat(2*time.Hour), []MachineRun{{ID: "a", Size: "s"}, {ID: "b", Size: "t", Created: mat(20 * time.Minute)}}, nil)
	require.NoError(t, err)
	require.Equal(t, map[string]float64{"s": 1, "t": (40 * time.Minute).Hours()}, m.NodeHours(mt0))
	require.Equal(t, map[string]float64{"s": 1, "t": 1}, m.NodeHours(mat(time.Hour)))
}

func TestMachinesListedAgainRunOn(t *testing.T) {
	var m Machines
	live := []MachineRun{{ID: "a", Size: "s", Created: mat(0)}}
	_, err := m.Take(mat(10*time.Minute), live, nil)
	require.NoError(t, err)
	_, err = m.Take(mat(20*time.Minute), nil, nil)
	require.NoError(t, err)
	_, err = m.Take(mat(30*time.Minute), live, nil)
	require.NoError(t, err)
	require.Empty(t, m.Ended)
	require.Len(t, m.Live, 1)
	require.InDelta(t, 0.5, m.NodeHours(mt0)["s"], 1e-12)
}
