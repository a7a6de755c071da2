// Command benchreport writes docs/BENCHMARKS.md: the speed figures of a
// `go test -bench -benchmem` log, and the control law scored against the
// baselines on the benchmark traces, with plots beside it. `make bench`
// runs it after the benchmarks.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	benchLog := fl.String("bench", "artifacts/bench.txt", "go test -bench -benchmem output to summarize (missing: speed section says so)")
	out := fl.String("out", "docs/BENCHMARKS.md", "report to write")
	plots := fl.String("plots", "docs/benchmarks", "directory for the SVG plots")
	openb := fl.String("trace", "traces/alibaba-gpu2023-openb-pods.csv", "the openb pod trace")
	spec := fl.String("spec", "traces/score-pools.yaml", "pools.yaml with the aws and sim pools to score")
	scoresOnly := fl.Bool("scores-only", false, "keep the speed section of the report at -out as it is and recompute only the scores (no bench log needed)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	var benches []benchmark
	var keptSpeed string
	if *scoresOnly {
		old, err := os.ReadFile(*out)
		if err != nil {
			return fmt.Errorf("-scores-only keeps the speed section of %s: %w", *out, err)
		}
		if keptSpeed, err = speedSection(string(old)); err != nil {
			return fmt.Errorf("%s: %w", *out, err)
		}
	} else {
		raw, err := os.ReadFile(*benchLog)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		default:
			if benches, err = parseBench(bytes.NewReader(raw)); err != nil {
				return fmt.Errorf("%s: %w", *benchLog, err)
			}
		}
	}
	start := time.Now()
	suite, err := scoreSuite(*openb, *spec)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(*out), *plots)
	if err != nil {
		return err
	}
	for i := range suite.comparisons {
		if _, err := suite.comparisons[i].WritePlots(*plots); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	writeReport(&b, report{
		generated: time.Now().UTC(), goVersion: runtime.Version(), cpus: runtime.NumCPU(),
		benchLog: *benchLog, benches: benches, keptSpeed: keptSpeed, suite: suite, plotDir: filepath.ToSlash(rel), scoreTime: time.Since(start),
	})
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(*out, b.Bytes(), 0o644)
}
