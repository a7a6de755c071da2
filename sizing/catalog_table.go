package sizing

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// catalogTableHeader is the first line of a catalog table. A table is data
// (a provider's list of sizes and prices), so it is kept as a CSV file
// beside its catalog and embedded, not written out as Go.
var catalogTableHeader = []string{"name", "family", "vcpu", "memory_gib", "gpus", "gpu_model", "max_pods", "hourly"}

// ParseCatalogTable reads a catalog table: CSV with the header
// name,family,vcpu,memory_gib,gpus,gpu_model,max_pods,hourly, where hourly
// is the list price per hour in the table's currency. Blank lines and lines
// starting with '#' are skipped.
func ParseCatalogTable(table string) ([]CatalogRow, error) {
	r := csv.NewReader(strings.NewReader(table))
	r.Comment = '#'
	r.FieldsPerRecord = len(catalogTableHeader)
	records, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("catalog table: %w", err)
	}
	if len(records) == 0 || !slices.Equal(records[0], catalogTableHeader) {
		return nil, fmt.Errorf("catalog table: the first line must be %s", strings.Join(catalogTableHeader, ","))
	}
	rows := make([]CatalogRow, 0, len(records)-1)
	for i, rec := range records[1:] {
		var ints [4]int64
		for j, col := range []int{2, 3, 4, 6} {
			if ints[j], err = strconv.ParseInt(rec[col], 10, 64); err != nil {
				return nil, fmt.Errorf("catalog table row %d (%s): %s: %w", i+1, rec[0], catalogTableHeader[col], err)
			}
		}
		hourly, err := strconv.ParseFloat(rec[7], 64)
		if err != nil {
			return nil, fmt.Errorf("catalog table row %d (%s): hourly: %w", i+1, rec[0], err)
		}
		rows = append(rows, Row(rec[0], rec[1], ints[0], ints[1]*1024, ints[2], rec[5], ints[3], hourly))
	}
	return rows, nil
}

// MustParseCatalogTable is ParseCatalogTable for a built-in table, embedded
// and read by its package's tests, so a bad one cannot ship.
func MustParseCatalogTable(table string) []CatalogRow {
	rows, err := ParseCatalogTable(table)
	if err != nil {
		panic(err)
	}
	return rows
}
