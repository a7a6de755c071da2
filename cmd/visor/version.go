package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hanzoai/visor-fleet/internal/release"
	"github.com/hanzoai/visor-fleet/workflows"
)

// versionInfo is what `visor version` prints: the release and commit the
// binary was built as, and the workflow change IDs it can replay and record.
type versionInfo struct {
	release.Build
	Changes []workflows.Change `json:"changes"`
}

func currentVersion() versionInfo {
	return versionInfo{Build: release.Current(), Changes: workflows.Changes}
}

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the release, the commit and the workflow change IDs this binary knows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			v := currentVersion()
			return writeOutput(cmd.OutOrStdout(), output, v, func(tw *tabwriter.Writer) {
				commit := v.Commit
				if commit == "" {
					commit = "unknown"
				}
				if v.Modified {
					commit += " (modified tree)"
				}
				fmt.Fprintf(tw, "release:\t%s\n", v.Release)
				fmt.Fprintf(tw, "commit:\t%s\n", commit)
				fmt.Fprintf(tw, "change IDs:\t%d\n", len(v.Changes))
				for _, c := range v.Changes {
					fmt.Fprintf(tw, "  %s\tup to version %d\tsince %s\n", c.ID, c.Max, c.Release)
				}
			})
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}
