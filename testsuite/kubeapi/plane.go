// Package kubeapi runs a real Kubernetes control plane for tests (the
// server programs are started by internal/kubeplane, which links no
// testing package, so `visor dev --kube` uses the same code): ForTest
// gives a test its own, Main and Shared give a package one it shares.
// Missing binaries skip the tests on a developer's machine and fail them
// in CI. fixtures.go stands in for the kubelet and the scheduler when the
// cluster runs neither.
package kubeapi

import "github.com/hanzoai/visor-fleet/internal/kubeplane"

// The control plane's types, as internal/kubeplane defines them.
type (
	Cluster              = kubeplane.Cluster
	Options              = kubeplane.Options
	Binaries             = kubeplane.Binaries
	MissingBinariesError = kubeplane.MissingBinariesError
)

// Versions, users and names, as internal/kubeplane defines them.
const (
	KubeVersion        = kubeplane.KubeVersion
	EtcdVersion        = kubeplane.EtcdVersion
	BuildScript        = kubeplane.BuildScript
	SchedulerBinary    = kubeplane.SchedulerBinary
	KwokBinary         = kubeplane.KwokBinary
	AdminUser          = kubeplane.AdminUser
	ConnectorUser      = kubeplane.ConnectorUser
	KwokManageSelector = kubeplane.KwokManageSelector
)

// The control plane's functions, as internal/kubeplane defines them.
var (
	Start            = kubeplane.Start
	FindBinaries     = kubeplane.FindBinaries
	CacheDir         = kubeplane.CacheDir
	ReadClusterRoles = kubeplane.ReadClusterRoles
	GrantClusterRole = kubeplane.GrantClusterRole
)
