// Package kwok is a provider whose machines are Node objects in the
// cluster's own API server, managed by kwok (sigs.k8s.io/kwok): kwok keeps
// them Ready and plays their pods' lifecycle (Running, Ready, deleted), and
// the real kube-scheduler binds pods to them. It lets a pool scale a real
// control plane with no cloud behind it: for the end-to-end suite against
// kube-scheduler (testsuite/kwok), `visor dev --kube`, and load tests.
//
// A node group is a ConfigMap in Config.Namespace (the provider's durable
// record: size, labels, taints, and one entry per machine with its node
// name, zone and launch time). Raising the target adds machines to the
// record; a reconciler creates each machine's Node once its boot delay has
// passed, with the size's allocatable and capacity (cpu, memory, pods,
// nvidia.com/gpu, ephemeral-storage), the labels sizing's node template
// promises (instance type, arch, zone, GPU product, the pool's identity and
// declared labels), the pool's taints, kwok's annotation
// kwok.x-k8s.io/node=fake and its type=kwok label. Deleting removes the
// machine from the record, then its Node. A group's ID, and so its
// ConfigMap's name, is derived from the creating call's idempotency key, so
// a repeated create finds the group the first one made; node names are the
// group ID and a machine ordinal that never repeats.
//
// What it does not model: launch failures, capacity shortages, prices
// (the catalog's are made up), and a kubelet (kwok's stages stand in).
package kwok

// ProviderName is the kind's name in clusters files and pool keys.
const ProviderName = "kwok"
