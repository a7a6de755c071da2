// Package kubefake adds to client-go's fake clientset the API server
// behaviour the fake skips and the kubernetes connector relies on: field
// selectors on pod and node lists, and an Eviction subresource that
// enforces PodDisruptionBudgets (disruptionsAllowed), honours the UID
// precondition and removes the evicted pod. Tests of the connector and of
// anything that runs it over a fake cluster (connectors/sim) share it.
package kubefake
