package score

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WritePlots draws the comparison into dir as SVG files and returns their
// paths: <trace>-nodes.svg (node count per policy above the demand they
// served, over time) and <trace>-pending.svg (the distribution of pod
// pending time per policy).
func (c Comparison) WritePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	nodes := filepath.Join(dir, c.Trace+"-nodes.svg")
	if err := c.plotNodes(nodes); err != nil {
		return nil, fmt.Errorf("%s: %w", nodes, err)
	}
	pending := filepath.Join(dir, c.Trace+"-pending.svg")
	if err := c.plotPending(pending); err != nil {
		return nil, fmt.Errorf("%s: %w", pending, err)
	}
	return []string{nodes, pending}, nil
}

func (c Comparison) allRuns() []Run {
	return append([]Run{c.LP, c.Bound, c.Packing, c.Fewest}, c.Runs...)
}

func series(run Run, y func(Sample) float64) plotter.XYs {
	xy := make(plotter.XYs, len(run.Series))
	for i, s := range run.Series {
		xy[i].X, xy[i].Y = s.At.Hours(), y(s)
	}
	return xy
}

func (c Comparison) plotNodes(path string) error {
	top := plot.New()
	top.Title.Text = fmt.Sprintf("%s: nodes per policy", c.Trace)
	top.Y.Label.Text = "nodes"
	top.Add(plotter.NewGrid())
	bottom := plot.New()
	bottom.Title.Text = "demand: CPU cores requested by pods alive"
	bottom.X.Label.Text = "hours"
	bottom.Y.Label.Text = "cores"
	bottom.Add(plotter.NewGrid())
	// The LP bound's node counts are the fractional bound's.
	if err := addLines(top, append([]Run{c.Bound, c.Packing, c.Fewest}, c.Runs...), func(s Sample) float64 { return float64(s.Nodes) }); err != nil {
		return err
	}
	middle := plot.New()
	middle.Title.Text = "hourly cost per policy"
	middle.Y.Label.Text = "$ per hour"
	middle.Add(plotter.NewGrid())
	if err := addLines(middle, append([]Run{c.LP, c.Bound}, c.Runs...), func(s Sample) float64 { return s.HourlyCost }); err != nil {
		return err
	}
	middle.Legend.Top, middle.Legend.Left = true, true
	demand, err := plotter.NewLine(series(c.Bound, func(s Sample) float64 { return s.DemandCPU }))
	if err != nil {
		return err
	}
	demand.Color = plotutil.Color(0)
	bottom.Add(demand)
	top.Legend.Top, top.Legend.Left = true, true
	const w, h = 24 * vg.Centimeter, 24 * vg.Centimeter
	img, err := draw.NewFormattedCanvas(w, h, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return err
	}
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 3, Cols: 1, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadX: vg.Millimeter * 2, PadY: vg.Millimeter * 4}
	plots := [][]*plot.Plot{{top}, {middle}, {bottom}}
	canvases := plot.Align(plots, tiles, dc)
	top.Draw(canvases[0][0])
	middle.Draw(canvases[1][0])
	bottom.Draw(canvases[2][0])
	return writeSVG(path, img)
}

// addLines draws y of each run, the first solid and the rest dashed.
func addLines(p *plot.Plot, runs []Run, y func(Sample) float64) error {
	for i, r := range runs {
		l, err := plotter.NewLine(series(r, y))
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(min(i, 1))
		p.Add(l)
		p.Legend.Add(r.Policy, l)
	}
	return nil
}

func (c Comparison) plotPending(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: pod pending time (CDF); threshold %s, target %s", c.Trace, c.Policy.PendingThreshold.D(), c.PendingLimit())
	p.X.Label.Text = "minutes pending"
	p.Y.Label.Text = "fraction of pods"
	p.Add(plotter.NewGrid())
	for i, r := range c.Runs {
		w := slices.Clone(r.Waits)
		slices.Sort(w)
		xy := make(plotter.XYs, 0, 256)
		// At most ~256 steps keep the SVG small.
		stride := max(1, len(w)/256)
		for k := 0; k < len(w); k += stride {
			xy = append(xy, plotter.XY{X: w[k].Minutes(), Y: float64(k+1) / float64(len(w))})
		}
		if len(w) > 0 {
			xy = append(xy, plotter.XY{X: w[len(w)-1].Minutes(), Y: 1})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i + 2)
		p.Add(l)
		p.Legend.Add(r.Policy, l)
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: c.PendingLimit().Minutes(), Y: 0}, {X: c.PendingLimit().Minutes(), Y: 1}})
	if err != nil {
		return err
	}
	limit.Dashes = plotutil.Dashes(1)
	p.Add(limit)
	p.Legend.Add("target", limit)
	p.Legend.Top = false
	p.Y.Min, p.Y.Max = 0, 1
	// The seed rule can leave pods waiting for hours; clip the x axis so
	// the law and the cluster-autoscaler-like rule stay readable.
	clip := 10.0
	if p.X.Max > clip {
		p.X.Min, p.X.Max = 0, clip
		p.Title.Text += fmt.Sprintf(" (x clipped at %.0f min)", clip)
	}
	return p.Save(24*vg.Centimeter, 12*vg.Centimeter, path)
}

func writeSVG(path string, img vg.CanvasWriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := img.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
