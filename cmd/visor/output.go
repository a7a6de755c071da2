package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Output formats every listing and describing command takes with -o.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// addOutputFlag gives cmd and its subcommands -o/--output.
func addOutputFlag(cmd *cobra.Command, format *string) {
	cmd.PersistentFlags().StringVarP(format, "output", "o", outputTable, "output format: table, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{outputTable, outputJSON, outputYAML}, cobra.ShellCompDirectiveNoFileComp
	})
}

// checkOutput rejects an unknown format before anything is asked of Temporal.
func checkOutput(format string) error {
	switch format {
	case outputTable, outputJSON, outputYAML:
		return nil
	}
	return fmt.Errorf("output format %q is not table, json or yaml", format)
}

// writeOutput prints v as JSON or YAML, or calls table for the default
// human form. Tables are aligned with a tabwriter: cells end with '\t'.
func writeOutput(w io.Writer, format string, v any, table func(tw *tabwriter.Writer)) error {
	switch format {
	case outputJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case outputYAML:
		raw, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(raw)
		return err
	case outputTable:
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		table(tw)
		return tw.Flush()
	}
	return checkOutput(format)
}

// ago renders a past moment for tables: "-" when unset, else its age.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.UTC().Format(time.RFC3339)
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm ago", int(d.Hours()), int(d.Minutes())%60)
	}
	return t.UTC().Format("2006-01-02 15:04Z")
}
