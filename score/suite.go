package score

import (
	"fmt"
	"time"
)

// The standard traces of the benchmark report.

// AlibabaDense is where the openb trace gets busy: before day 115 it holds
// only 27 pods (see traces/alibaba-gpu2023-openb-pods.md).
const AlibabaDense = 115 * 24 * time.Hour

// CompressAlibaba turns the dense 34 days of the openb trace into one busy
// day: arrivals are compressed 34x, lifetimes kept, and everything is cut
// at the end of the day.
func CompressAlibaba(full Trace) (Trace, error) {
	dense := full.Window(AlibabaDense, full.Span()+time.Second)
	days := float64(dense.Span()) / float64(24*time.Hour)
	factor := float64(int(days)) // whole days onto one
	if factor < 1 {
		return Trace{}, fmt.Errorf("trace %s: dense part is shorter than a day", full.Name)
	}
	c, err := dense.Compress(factor, 0)
	if err != nil {
		return Trace{}, err
	}
	day := c.Window(0, 24*time.Hour)
	day.Name = "alibaba-1d"
	return day, nil
}

// SyntheticTraces are the diurnal, bursty and step traces of the report:
// a day each of web-service-like pods, deterministic for the seed.
func SyntheticTraces(seed uint64) []Trace {
	day := 24 * time.Hour
	return []Trace{
		Diurnal(day, 2, 30, 40*time.Minute, seed),
		Bursty(day, 4, 60, 2*time.Hour, 10*time.Minute, 30*time.Minute, seed+1),
		Step(day, []float64{5, 20, 40, 10, 30, 5}, 45*time.Minute, seed+2),
	}
}
