package score

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// alibabaColumns is the header of Alibaba cluster-trace-gpu-v2023's
// openb_pod_list_*.csv (see traces/alibaba-gpu2023-openb-pods.md).
var alibabaColumns = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}

// ReadAlibabaFile reads an openb pod list from a file.
func ReadAlibabaFile(path string) (Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return Trace{}, err
	}
	defer f.Close()
	t, err := ReadAlibaba(f)
	if err != nil {
		return Trace{}, fmt.Errorf("%s: %w", path, err)
	}
	t.Name, t.Source = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), path
	return t, nil
}

// ReadAlibaba reads an openb pod list. A GPU-sharing pod (num_gpu 1,
// gpu_milli < 1000) is given a whole GPU: the planner counts whole GPUs.
// gpu_spec, when set, names the GPU model ("A|B" alternatives keep the
// first). Every error names the line and the column.
func ReadAlibaba(r io.Reader) (Trace, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(alibabaColumns)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return Trace{}, fmt.Errorf("header: %w", err)
	}
	for i, want := range alibabaColumns {
		if header[i] != want {
			return Trace{}, fmt.Errorf("header column %d is %q, want %q", i+1, header[i], want)
		}
	}
	tr := Trace{Name: "alibaba"}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Trace{}, err
		}
		num := func(col int) int64 {
			if err != nil {
				return 0
			}
			var v int64
			v, err = strconv.ParseInt(rec[col], 10, 64)
			if err == nil && v < 0 {
				err = errors.New("is negative")
			}
			if err != nil {
				err = fmt.Errorf("line %d: column %s: %q %w", line, alibabaColumns[col], rec[col], unwrapNum(err))
			}
			return v
		}
		cpu, mem, gpus := num(1), num(2), num(3)
		created, deleted := num(8), num(9)
		if err != nil {
			return Trace{}, err
		}
		if deleted <= created {
			// A pod deleted the second it was created asks nothing of anyone.
			deleted = created + 1
		}
		model := rec[5]
		for i := 0; i < len(model); i++ {
			if model[i] == '|' {
				model = model[:i]
				break
			}
		}
		tr.Pods = append(tr.Pods, Pod{
			Name:     rec[0],
			Requests: types.Resources{MilliCPU: cpu, Memory: mem * types.MiB, GPUs: gpus, Pods: 1},
			GPUModel: model,
			Arrive:   time.Duration(created) * time.Second,
			Depart:   time.Duration(deleted) * time.Second,
		})
	}
	sortByArrival(tr.Pods)
	return tr, tr.Validate()
}

func unwrapNum(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
}

// WriteAlibaba writes a trace in the openb pod-list format ReadAlibaba
// reads, so synthetic traces ship as files beside the real one.
func WriteAlibaba(w io.Writer, t Trace) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(alibabaColumns); err != nil {
		return err
	}
	for _, p := range t.Pods {
		gpuMilli := p.Requests.GPUs * 1000
		arrive, depart := int64(p.Arrive/time.Second), int64(p.Depart/time.Second)
		if err := cw.Write([]string{
			p.Name, strconv.FormatInt(p.Requests.MilliCPU, 10), strconv.FormatInt(p.Requests.Memory/types.MiB, 10),
			strconv.FormatInt(p.Requests.GPUs, 10), strconv.FormatInt(gpuMilli, 10), p.GPUModel, "LS", "Succeeded",
			strconv.FormatInt(arrive, 10), strconv.FormatInt(depart, 10), strconv.FormatInt(arrive, 10),
		}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
