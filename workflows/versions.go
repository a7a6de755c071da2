package workflows

// Change IDs for workflow.GetVersion. Every change to a workflow's command
// sequence gets one, and testsuite/replay proves old histories still replay.
const (
	// versionMeterFinalHour: deregistration meters the partial last hour.
	versionMeterFinalHour = "meter-final-hour"
	// versionReleaseOnDeregister: deregistration releases every node group
	// to zero, so machines still booting are not orphaned.
	versionReleaseOnDeregister = "release-on-deregister"
)
