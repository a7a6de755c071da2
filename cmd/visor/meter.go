package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/types"
)

// meterRow and meterTotal are the ledger's rows as printed.
type meterRow struct {
	Hour        time.Time `json:"hour"`
	Org         string    `json:"org"`
	Pool        string    `json:"pool"`
	Size        string    `json:"size"`
	NodeHours   float64   `json:"nodeHours"`
	Idempotency string    `json:"idempotency"`
	RecordedAt  time.Time `json:"recordedAt"`
}

type meterTotal struct {
	Org       string  `json:"org"`
	Pool      string  `json:"pool"`
	Size      string  `json:"size"`
	Hours     int     `json:"hours"`
	NodeHours float64 `json:"nodeHours"`
}

type meterReport struct {
	Rows   []meterRow   `json:"rows"`
	Totals []meterTotal `json:"totals"`
	// OpenHour is the UTC hour now accruing: not yet billed, so in no row.
	// Its rows appear once it is complete, at BilledAfter.
	OpenHour    time.Time `json:"openHour"`
	BilledAfter time.Time `json:"billedAfter"`
}

func newMeterCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{Use: "meter", Short: "Read the node-hour ledger"}
	addOutputFlag(cmd, &output)

	var ledgerPath string
	var f metering.Filter
	var from, to timeFlag
	list := &cobra.Command{
		Use:   "list",
		Short: "List node-hour events and their totals per org, pool and size",
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
			f.From, f.To = from.t, to.t
			// Opening creates a missing file; a reader must not.
			if _, err := os.Stat(ledgerPath); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("ledger %s does not exist (visor dev writes <data-dir>/meter.db; a worker writes its --meter-ledger)", ledgerPath)
				}
				return fmt.Errorf("ledger %s: %w", ledgerPath, err)
			}
			ledger, err := metering.OpenLedger(ledgerPath)
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
			open := time.Now().UTC().Truncate(time.Hour)
			report := meterReport{Rows: make([]meterRow, 0, len(rows)), Totals: make([]meterTotal, 0, len(totals)),
				OpenHour: open, BilledAfter: open.Add(time.Hour)}
			for _, r := range rows {
				report.Rows = append(report.Rows, meterRow{Hour: r.Hour, Org: r.UserID, Pool: r.Pool, Size: r.Size, NodeHours: r.Value, Idempotency: r.Idempotency, RecordedAt: r.RecordedAt})
			}
			for _, t := range totals {
				report.Totals = append(report.Totals, meterTotal(t))
			}
			if err := writeOutput(cmd.OutOrStdout(), output, report, func(tw *tabwriter.Writer) {
				fmt.Fprintln(tw, "HOUR\tORG\tPOOL\tSIZE\tNODE-HOURS")
				for _, r := range report.Rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\n", r.Hour.Format("2006-01-02T15Z"), r.Org, r.Pool, r.Size, r.NodeHours)
				}
				fmt.Fprintln(tw, "\nTOTAL\tORG\tPOOL\tSIZE\tNODE-HOURS")
				for _, t := range report.Totals {
					fmt.Fprintf(tw, "%d h\t%s\t%s\t%s\t%.3f\n", t.Hours, t.Org, t.Pool, t.Size, t.NodeHours)
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
