package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// benchmark is one result line of `go test -bench -benchmem`.
type benchmark struct {
	Pkg     string
	Name    string // without the -GOMAXPROCS suffix
	N       int64
	Metrics []metric // in line order: ns/op, B/op, allocs/op, custom units
}

type metric struct {
	Value float64
	Unit  string
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads benchmark lines and the pkg: lines that say where they
// came from; everything else (PASS, ok, logs) is skipped.
func parseBench(r io.Reader) ([]benchmark, error) {
	var out []benchmark
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if p, ok := strings.CutPrefix(text, "pkg: "); ok {
			pkg = p
			continue
		}
		if !strings.HasPrefix(text, "Benchmark") {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 4 || len(f)%2 != 0 {
			continue // a benchmark's own log line, not a result
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		b := benchmark{Pkg: pkg, Name: procsSuffix.ReplaceAllString(f[0], ""), N: n}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: value %q is not a number", line, f[0], f[i])
			}
			b.Metrics = append(b.Metrics, metric{v, f[i+1]})
		}
		out = append(out, b)
	}
	return out, sc.Err()
}
