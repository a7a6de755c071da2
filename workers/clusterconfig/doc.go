// Package clusterconfig tells a production worker how to reach each
// cluster it serves: a YAML file lists every cluster with its Kubernetes
// access (a kubeconfig path and context, or the worker's own in-cluster
// service account) and its provider's configuration, whose credentials are
// references (env:, file:, secret:), never values.
//
// Load checks the whole file up front and names the file, the cluster and
// the field of every problem. NewSource turns it into the worker's
// activities.ClusterSource: each cluster's connectors are built on the
// first activity that needs them, on the worker, so credentials are
// resolved where they live and never travel through workflow history. A
// tenant's own worker (BYO cloud) lists only that tenant's clusters.
//
// Each provider section is read, checked and built by the provider's own
// connectors.Kind, registered in kinds.go; every built provider is wrapped
// in connectors.Checked.
//
// The file format, with an example per provider, is documented in
// deploy/worker-clusters.example.yaml.
package clusterconfig
