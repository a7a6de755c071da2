package workflows

// MetricOfferingsUnavailable is how many offerings the pool has marked
// unavailable now; MetricOfferingUnavailable counts the marks, by
// capacity type.
const (
	MetricOfferingsUnavailable = "visor_pool_offerings_unavailable"
	MetricOfferingUnavailable  = "visor_pool_offering_unavailable"
)
