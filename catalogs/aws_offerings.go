package catalogs

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// awsRegion is the region the AWS tables were priced in; awsZones its zones
// the spot table covers.
const awsRegion = "us-east-1"

// spotPriceDate is when aws_spot.csv's spot prices were taken.
const spotPriceDate = "2026-11"

//go:embed aws_spot.csv
var awsSpotTable string

// awsSpot maps an instance type to its spot price per zone, read once.
var awsSpot, awsZones = mustParseSpotTable(awsSpotTable)

// parseSpotTable reads name,<zone>,<zone>,...: a spot price per type and
// zone, an empty cell where the zone has no spot offering.
func parseSpotTable(table string) (map[string]map[string]float64, []string, error) {
	r := csv.NewReader(strings.NewReader(table))
	r.Comment = '#'
	records, err := r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("spot table: %w", err)
	}
	if len(records) == 0 || records[0][0] != "name" || len(records[0]) < 2 {
		return nil, nil, fmt.Errorf("spot table: the first line must be name,<zone>,...")
	}
	zones := records[0][1:]
	out := make(map[string]map[string]float64, len(records)-1)
	for i, rec := range records[1:] {
		prices := map[string]float64{}
		for j, cell := range rec[1:] {
			if cell == "" {
				continue
			}
			p, err := strconv.ParseFloat(cell, 64)
			if err != nil || p <= 0 {
				return nil, nil, fmt.Errorf("spot table row %d (%s), zone %s: %q is not a price", i+1, rec[0], zones[j], cell)
			}
			prices[zones[j]] = p
		}
		out[rec[0]] = prices
	}
	return out, zones, nil
}

func mustParseSpotTable(table string) (map[string]map[string]float64, []string) {
	m, z, err := parseSpotTable(table)
	if err != nil {
		panic(err)
	}
	return m, z
}

// withAWSOfferings gives each type on-demand in every zone at its list
// price and spot where the spot table prices it.
func withAWSOfferings(catalog []types.InstanceType) []types.InstanceType {
	for i := range catalog {
		t := &catalog[i]
		t.Offerings = make([]types.Offering, 0, 2*len(awsZones))
		for _, z := range awsZones {
			t.Offerings = append(t.Offerings, types.Offering{Zone: z, CapacityType: types.CapacityOnDemand, HourlyPrice: t.HourlyPrice, Available: true})
		}
		for _, z := range awsZones {
			if p, ok := awsSpot[t.Name][z]; ok {
				t.Offerings = append(t.Offerings, types.Offering{Zone: z, CapacityType: types.CapacitySpot, HourlyPrice: p, Available: true})
			}
		}
	}
	return catalog
}

// InRegion renames the offerings' zones from the region the tables were
// priced in to region (us-east-1a becomes eu-west-1a), keeping the prices:
// a connector in another region launches in its own zones, priced as
// us-east-1 until a table for the region exists.
func InRegion(catalog []types.InstanceType, region string) []types.InstanceType {
	if region == "" || region == awsRegion {
		return catalog
	}
	out := make([]types.InstanceType, len(catalog))
	for i, t := range catalog {
		out[i] = t
		out[i].Offerings = make([]types.Offering, len(t.Offerings))
		for j, o := range t.Offerings {
			if rest, ok := strings.CutPrefix(o.Zone, awsRegion); ok {
				o.Zone = region + rest
			}
			out[i].Offerings[j] = o
		}
	}
	return out
}
