// Package kubernetes is the cluster side of every pool: it observes demand
// (unschedulable pods attributed by hanzo.ai/org, hanzo.ai/project and
// hanzo.ai/service) and supply (nodes labelled hanzo.ai/pool, with
// requests / allocatable and metrics-server usage), and it drains nodes
// through the Eviction API so PodDisruptionBudgets are honoured.
//
// Everything talks to the API through client-go's kubernetes.Interface, so
// the same code runs against a real API server and the fake clientset
// (with the reactors in kubefake for what the fake skips).
package kubernetes

// providerName is the Provider field of every *errclass.Error from here.
const providerName = "kubernetes"
