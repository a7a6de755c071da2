package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/types"
)

// meterRow, meterTotal and meterOrgTotal are the ledger as printed. Value
// is node-hours for the node-hours meter (managed pools) and pool-hours
// for the management-plane meter (bring-your-own pools).
type meterRow struct {
	Hour        time.Time `json:"hour"`
	Tier        string    `json:"tier"`
	Meter       string    `json:"meterId"`
	Org         string    `json:"org"`
	Project     string    `json:"project"`
	Pool        string    `json:"pool"`
	Provider    string    `json:"provider"`
	Cluster     string    `json:"cluster"`
	Size        string    `json:"size,omitempty"`
	Value       float64   `json:"value"`
	Idempotency string    `json:"idempotency"`
	RecordedAt  time.Time `json:"recordedAt"`
}

type meterTotal struct {
	Org   string  `json:"org"`
	Tier  string  `json:"tier"`
	Meter string  `json:"meterId"`
	Pool  string  `json:"pool"`
	Size  string  `json:"size,omitempty"`
	Hours int     `json:"hours"`
	Value float64 `json:"value"`
}

type meterOrgTotal struct {
	Org   string  `json:"org"`
	Tier  string  `json:"tier"`
	Meter string  `json:"meterId"`
	Pools int     `json:"pools"`
	Hours int     `json:"hours"`
	Value float64 `json:"value"`
}

type meterReport struct {
	Rows []meterRow `json:"rows"`
	// Totals are per pool and size; OrgTotals per org, tier and meter:
	// what each org is billed.
	Totals    []meterTotal    `json:"totals"`
	OrgTotals []meterOrgTotal `json:"orgTotals"`
	// OpenHour is the UTC hour now accruing: not yet billed, so in no row.
	// Its rows appear once it is complete, at BilledAfter.
	OpenHour    time.Time `json:"openHour"`
	BilledAfter time.Time `json:"billedAfter"`
}

// meterName is a meter ID as a column shows it.
func meterName(id string) string { return strings.TrimPrefix(id, "visor.") }

// unitOf is what a meter's value counts.
func unitOf(id string) string {
	if id == metering.MeterPoolHours {
		return "pool-h"
	}
	return "node-h"
}

func newMeterCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{Use: "meter", Short: "Read the node-hour ledger"}
	addOutputFlag(cmd, &output)

	var ledgerPath string
	var f meterledger.Filter
	var from, to timeFlag
	list := &cobra.Command{
		Use:   "list",
		Short: "List meter events (managed node-hours, BYO management-plane pool-hours) with totals per pool and per org and meter",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if f.Org != "" {
				if err := types.ValidateDNSLabel("--org", f.Org); err != nil {
					return err
				}
			}
			if f.Pool != "" {
				if _, err := types.ParsePoolID(f.Pool); err != nil {
					return fmt.Errorf("--pool: %w", err)
				}
			}
			switch f.Tier {
			case "", string(contract.TierManaged), string(contract.TierBYO):
			default:
				return fmt.Errorf("--tier %q is not one of managed, byo", f.Tier)
			}
			switch f.Meter {
			case "", metering.MeterNodeHours, metering.MeterPoolHours:
			default:
				return fmt.Errorf("--meter %q is not one of %s, %s", f.Meter, metering.MeterNodeHours, metering.MeterPoolHours)
			}
			f.From, f.To = from.t, to.t
			// Opening creates a missing file; a reader must not.
			if _, err := os.Stat(ledgerPath); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("ledger %s does not exist (visor dev writes <data-dir>/meter.db; a worker writes its --meter-ledger)", ledgerPath)
				}
				return fmt.Errorf("ledger %s: %w", ledgerPath, err)
			}
			ledger, err := meterledger.Open(ledgerPath)
			if err != nil {
				return err
			}
			defer ledger.Close()
			rows, err := ledger.List(cmd.Context(), f)
			if err != nil {
				return err
			}
			totals, err := ledger.Totals(cmd.Context(), f)
			if err != nil {
				return err
			}
			orgTotals, err := ledger.OrgTotals(cmd.Context(), f)
			if err != nil {
				return err
			}
			open := time.Now().UTC().Truncate(time.Hour)
			report := meterReport{Rows: make([]meterRow, 0, len(rows)), Totals: make([]meterTotal, 0, len(totals)),
				OrgTotals: make([]meterOrgTotal, 0, len(orgTotals)), OpenHour: open, BilledAfter: open.Add(time.Hour)}
			for _, r := range rows {
				report.Rows = append(report.Rows, meterRow{Hour: r.Hour, Tier: string(r.Tier), Meter: r.MeterID, Org: r.UserID,
					Project: r.Project, Pool: r.PoolID, Provider: r.Provider, Cluster: r.Cluster, Size: r.Size,
					Value: r.Value, Idempotency: r.Idempotency, RecordedAt: r.RecordedAt})
			}
			for _, t := range totals {
				report.Totals = append(report.Totals, meterTotal{Org: t.Org, Tier: t.Tier, Meter: t.MeterID, Pool: t.Pool, Size: t.Size, Hours: t.Hours, Value: t.Value})
			}
			for _, t := range orgTotals {
				report.OrgTotals = append(report.OrgTotals, meterOrgTotal{Org: t.Org, Tier: t.Tier, Meter: t.MeterID, Pools: t.Pools, Hours: t.Hours, Value: t.Value})
			}
			// Nothing billed yet: one sentence on stdout, where the table
			// would be, instead of three empty tables and a note elsewhere.
			if output == outputTable && len(report.Rows) == 0 && len(report.Totals) == 0 {
				if f.To.IsZero() || f.To.After(open) {
					fmt.Fprintln(cmd.OutOrStdout(), openHourNote(true, open))
				} else {
					fmt.Fprintln(cmd.OutOrStdout(), "no metered hour matches.")
				}
				return nil
			}
			if err := writeOutput(cmd.OutOrStdout(), output, report, func(tw *tabwriter.Writer) {
				fmt.Fprintln(tw, "HOUR\tTIER\tMETER\tORG\tPOOL\tSIZE\tVALUE")
				for _, r := range report.Rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.3f %s\n", r.Hour.Format("2006-01-02T15Z"), r.Tier, meterName(r.Meter), r.Org, r.Pool, orDash(r.Size), r.Value, unitOf(r.Meter))
				}
				fmt.Fprintln(tw, "\nPOOL TOTAL\tTIER\tMETER\tORG\tPOOL\tSIZE\tVALUE")
				for _, t := range report.Totals {
					fmt.Fprintf(tw, "%d h\t%s\t%s\t%s\t%s\t%s\t%.3f %s\n", t.Hours, t.Tier, meterName(t.Meter), t.Org, t.Pool, orDash(t.Size), t.Value, unitOf(t.Meter))
				}
				fmt.Fprintln(tw, "\nORG TOTAL\tTIER\tMETER\tORG\tPOOLS\t\tVALUE")
				for _, t := range report.OrgTotals {
					fmt.Fprintf(tw, "%d h\t%s\t%s\t%s\t%d\t\t%.3f %s\n", t.Hours, t.Tier, meterName(t.Meter), t.Org, t.Pools, t.Value, unitOf(t.Meter))
				}
			}); err != nil {
				return err
			}
			if output == outputTable && (f.To.IsZero() || f.To.After(open)) {
				fmt.Fprintln(cmd.ErrOrStderr(), openHourNote(len(report.Rows) == 0, open))
			}
			return nil
		},
	}
	fl := list.Flags()
	fl.StringVar(&ledgerPath, "ledger", filepath.Join(".visor", "meter.db"), "SQLite ledger file")
	fl.StringVar(&f.Org, "org", "", "only this org")
	fl.StringVar(&f.Pool, "pool", "", "only this pool (its ID)")
	fl.StringVar(&f.Tier, "tier", "", "only this billing tier (managed or byo)")
	fl.StringVar(&f.Meter, "meter", "", "only this meter ("+metering.MeterNodeHours+" or "+metering.MeterPoolHours+")")
	fl.Var(&from, "from", "first hour, inclusive (RFC 3339, 2006-01-02T15 or 2006-01-02; UTC)")
	fl.Var(&to, "to", "end, exclusive (same forms)")
	fl.IntVar(&f.Limit, "limit", 0, "at most this many rows (totals still cover every row)")
	_ = list.MarkFlagFilename("ledger", "db")
	cmd.AddCommand(list)
	return cmd
}

// openHourNote says why the current hour is in no row, and when it will be:
// only complete UTC hours are metered, each exactly once.
func openHourNote(empty bool, open time.Time) string {
	span := fmt.Sprintf("%s–%s", open.Format("15:04Z"), open.Add(time.Hour).Format("15:04Z"))
	if empty {
		return fmt.Sprintf("no complete hour metered yet: node-hours are billed per complete UTC hour. The open hour %s is accruing, not yet billed; its rows appear shortly after %s.", span, open.Add(time.Hour).Format("15:04Z"))
	}
	return fmt.Sprintf("the open hour %s is accruing, not yet billed; its rows appear shortly after %s.", span, open.Add(time.Hour).Format("15:04Z"))
}

// timeFlag parses the few time forms people type for hours.
type timeFlag struct{ t time.Time }

var timeLayouts = []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02T15", "2006-01-02"}

func (f *timeFlag) Set(s string) error {
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			f.t = t
			return nil
		}
	}
	return fmt.Errorf("%q is not a time like 2025-03-01T15:04:05Z, 2025-03-01T15 or 2025-03-01", s)
}

func (f *timeFlag) String() string {
	if f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f *timeFlag) Type() string { return "time" }
