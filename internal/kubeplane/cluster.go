// Package kubeplane runs a real Kubernetes control plane: etcd,
// kube-apiserver and kube-controller-manager built from the Go module
// proxy by testsuite/kubeapi/build-binaries.sh, on free loopback ports,
// with RBAC on and the connector's user bound to the ClusterRole shipped in
// deploy/rbac; optionally kube-scheduler and kwok. Without them there is
// no kubelet and no scheduler: tests create Node objects, bind pods and
// write pod status themselves (testsuite/kubeapi's fixtures).
//
// The controller manager runs only the disruption controller unless told
// otherwise, so PodDisruptionBudget status is computed the way a real
// cluster computes it, from pod readiness, and the eviction API enforces it.
//
// It links no testing package: `visor dev --kube` starts its control
// plane with it. testsuite/kubeapi wraps it for tests (a shared cluster,
// skip or fail on missing binaries).
package kubeplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	// AdminUser is in system:masters: RBAC never limits it.
	AdminUser = "visor-admin"
	// ConnectorUser is bound to the shipped ClusterRole and nothing else.
	ConnectorUser = "visor-connector"
	// controllerManagerUser runs kube-controller-manager's controllers.
	controllerManagerUser = "system:kube-controller-manager"
	// schedulerUser and kwokUser run kube-scheduler and kwok.
	schedulerUser = "system:kube-scheduler"
	kwokUser      = "system:kwok-controller"
)

// Options shape a cluster. The zero value is what most tests want.
type Options struct {
	// ClusterRoleFile is the RBAC manifest whose ClusterRoles ConnectorUser
	// is bound to. Default: deploy/rbac/clusterrole.yaml of this module.
	ClusterRoleFile string
	// ClusterRoleYAML, when set, is that manifest's content instead (a
	// binary run outside the repository embeds it).
	ClusterRoleYAML []byte
	// ExtraUsers get a token but no permissions; tests bind them to
	// what they need (for example a ClusterRole with a verb removed).
	ExtraUsers []string
	// StartTimeout bounds waiting for the servers. Default 3 minutes: the
	// machine is shared, and kube-apiserver takes ~10 s when idle.
	StartTimeout time.Duration
	// Controllers are kube-controller-manager's controllers; default only
	// "disruption". With kwok keeping nodes alive, "daemonset",
	// "replicaset" and "deployment" are safe to add.
	Controllers []string
	// Scheduler runs the real kube-scheduler, which binds pods to nodes.
	Scheduler bool
	// Kwok runs kwok, managing the nodes annotated kwok.x-k8s.io/node=fake
	// (KwokManageSelector): it keeps them Ready and plays their pods'
	// lifecycle (Running and Ready once bound, removed once deleted).
	// The node lifecycle controller runs with it, to lift the not-ready
	// taint the API server puts on every new node.
	Kwok bool
}

// KwokManageSelector is the annotation selector kwok is started with.
const KwokManageSelector = "kwok.x-k8s.io/node=fake"

// OptionalBinaries are the binaries beyond etcd, kube-apiserver and
// kube-controller-manager these options need, for FindBinaries.
func (o Options) OptionalBinaries() []string {
	var out []string
	if o.Scheduler {
		out = append(out, SchedulerBinary)
	}
	if o.Kwok {
		out = append(out, KwokBinary)
	}
	return out
}

// Cluster is a running control plane.
type Cluster struct {
	// URL is kube-apiserver's https address on 127.0.0.1.
	URL string
	// AdminConfig authenticates as AdminUser (system:masters).
	AdminConfig *rest.Config
	// ConnectorConfig authenticates as ConnectorUser, limited by the
	// shipped ClusterRole.
	ConnectorConfig *rest.Config
	// ClusterRoles are the names of the ClusterRoles applied from
	// Options.ClusterRoleFile.
	ClusterRoles []string
	// StartedIn is how long Start took, first byte to ready.
	StartedIn time.Duration

	dir   string
	procs []*process
	users map[string]staticUser
	ca    []byte
	// urls are the components' loopback addresses by name, for Metrics.
	urls map[string]string
}

// Start runs etcd, kube-apiserver and kube-controller-manager and returns
// when all are ready and the RBAC manifest is applied and in force. On error
// nothing is left running; the error carries the servers' log tails.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	began := time.Now()
	bins, err := FindBinaries(opts.OptionalBinaries()...)
	if err != nil {
		return nil, err
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 3 * time.Minute
	}
	var manifest []clusterRoleDoc
	if opts.ClusterRoleYAML != nil {
		manifest, err = parseClusterRoles("Options.ClusterRoleYAML", opts.ClusterRoleYAML)
	} else {
		if opts.ClusterRoleFile == "" {
			root, err := moduleRoot()
			if err != nil {
				return nil, err
			}
			opts.ClusterRoleFile = filepath.Join(root, "deploy", "rbac", "clusterrole.yaml")
		}
		manifest, err = readClusterRoles(opts.ClusterRoleFile)
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		dir, err := os.MkdirTemp("", "visor-kubeapi-")
		if err != nil {
			return nil, err
		}
		c := &Cluster{dir: dir, users: map[string]staticUser{}}
		err = c.start(ctx, bins, opts, manifest)
		if err == nil {
			c.StartedIn = time.Since(began)
			return c, nil
		}
		logs := c.Logs(30)
		c.Stop()
		// A port found free can be taken by another process before the
		// server binds it: start again on new ports.
		if attempt < maxStartAttempts && ctx.Err() == nil && strings.Contains(logs, "address already in use") {
			continue
		}
		return nil, fmt.Errorf("kubeplane: start control plane: %w\n%s", err, logs)
	}
}

// maxStartAttempts bounds the starts a port taken meanwhile may cost.
const maxStartAttempts = 3

func (c *Cluster) start(ctx context.Context, bins Binaries, opts Options, manifest []clusterRoleDoc) error {
	etcdURL, err := c.startEtcd(ctx, bins.Etcd)
	if err != nil {
		return err
	}
	if err := c.makeUsers(opts.ExtraUsers); err != nil {
		return err
	}
	if err := c.startAPIServer(ctx, bins.APIServer, etcdURL); err != nil {
		return err
	}
	if err := c.startControllerManager(ctx, bins.ControllerManager, opts.Controllers, opts.Kwok); err != nil {
		return err
	}
	if opts.Scheduler {
		if err := c.startScheduler(ctx, bins.Scheduler); err != nil {
			return err
		}
	}
	if opts.Kwok {
		if err := c.startKwok(ctx, bins.Kwok); err != nil {
			return err
		}
	}
	roles, err := applyConnectorRBAC(ctx, c.AdminConfig, manifest, ConnectorUser)
	if err != nil {
		return err
	}
	c.ClusterRoles = roles
	return nil
}

func (c *Cluster) startEtcd(ctx context.Context, binary string) (string, error) {
	clientPort, err := freePort()
	if err != nil {
		return "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return "", err
	}
	clientURL, peerURL := loopbackURL("http", clientPort), loopbackURL("http", peerPort)
	p, err := startProcess(c.dir, "etcd", binary,
		"--name=visor-test",
		"--data-dir="+filepath.Join(c.dir, "etcd-data"),
		"--listen-client-urls="+clientURL,
		"--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=visor-test="+peerURL,
		// Test data is thrown away; fsync only slows a shared disk.
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	if err != nil {
		return "", err
	}
	c.procs = append(c.procs, p)
	return clientURL, waitHealthy(ctx, p, clientURL+"/health", nil, "")
}

func (c *Cluster) makeUsers(extra []string) error {
	add := func(name string, groups ...string) error {
		if _, dup := c.users[name]; dup {
			return fmt.Errorf("user %q listed twice", name)
		}
		u, err := newStaticUser(name, groups...)
		if err != nil {
			return err
		}
		c.users[name] = u
		return nil
	}
	if err := add(AdminUser, "system:masters"); err != nil {
		return err
	}
	if err := add(controllerManagerUser, "system:masters"); err != nil {
		return err
	}
	if err := add(schedulerUser, "system:masters"); err != nil {
		return err
	}
	if err := add(kwokUser, "system:masters"); err != nil {
		return err
	}
	if err := add(ConnectorUser); err != nil {
		return err
	}
	for _, name := range extra {
		if strings.TrimSpace(name) == "" || strings.ContainsAny(name, ",\"\n") {
			return fmt.Errorf("extra user name %q is empty or has a comma, quote or newline", name)
		}
		if err := add(name); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) startAPIServer(ctx context.Context, binary, etcdURL string) error {
	saKey, saPub, err := writeServiceAccountKeys(c.dir)
	if err != nil {
		return err
	}
	cert, err := writeServingCert(c.dir)
	if err != nil {
		return err
	}
	c.ca = cert.CAPEM
	users := make([]staticUser, 0, len(c.users))
	for _, u := range c.users {
		users = append(users, u)
	}
	tokenFile := filepath.Join(c.dir, "tokens.csv")
	if err := writeTokenFile(tokenFile, users); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.URL = loopbackURL("https", port)
	p, err := startProcess(c.dir, "kube-apiserver", binary,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+cert.CertPath,
		"--tls-private-key-file="+cert.KeyPath,
		"--cert-dir="+filepath.Join(c.dir, "apiserver-certs"),
		"--token-auth-file="+tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saPub,
		"--service-account-signing-key-file="+saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		// No service-account token controller runs, so pods could not be
		// admitted with the ServiceAccount plugin on.
		"--disable-admission-plugins=ServiceAccount",
		// The "kubernetes" Service endpoint would be 127.0.0.1, which
		// Endpoints validation rejects; nothing here needs it.
		"--endpoint-reconciler-type=none",
	)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	c.AdminConfig = c.restConfig(c.users[AdminUser].Token)
	c.ConnectorConfig = c.restConfig(c.users[ConnectorUser].Token)
	return waitHealthy(ctx, p, c.URL+"/readyz", c.ca, c.users[AdminUser].Token)
}

func (c *Cluster) startControllerManager(ctx context.Context, binary string, controllers []string, kwok bool) error {
	if len(controllers) == 0 {
		// Only PodDisruptionBudget status: with no kubelets the node
		// lifecycle and pod GC controllers would evict and delete the
		// tests' pods.
		controllers = []string{"disruption"}
	}
	args := []string{}
	if kwok && !slices.Contains(controllers, nodeLifecycleController) {
		// The API server's TaintNodesByCondition admission puts
		// node.kubernetes.io/not-ready:NoSchedule on every new node; in a
		// real cluster the node lifecycle controller lifts it once the
		// node is Ready, and so it does here: kwok keeps the nodes alive.
		controllers = append(slices.Clone(controllers), nodeLifecycleController)
	}
	if slices.Contains(controllers, nodeLifecycleController) {
		args = append(args,
			// Lift the not-ready taint within a second of Ready, not five.
			"--node-monitor-period=1s",
			// kwok's heartbeat comes every 20 to 45 s; on a loaded machine
			// the default 50 s grace would mark nodes Unknown and taint
			// them NoExecute.
			"--node-monitor-grace-period=3m",
			"--node-startup-grace-period=3m")
	}
	// The default 20 requests/s would take minutes to create a large
	// ReplicaSet's pods.
	args = append(args, "--kube-api-qps=500", "--kube-api-burst=1000")
	args = append(args, "--controllers="+strings.Join(controllers, ","))
	return c.startComponent(ctx, "kube-controller-manager", binary, controllerManagerUser, "https", args...)
}

// nodeLifecycleController removes a Ready node's not-ready taint.
const nodeLifecycleController = "nodelifecycle"

// startComponent runs a control-plane program that reaches the API server
// as user through its own kubeconfig and serves /healthz on a free
// loopback port (over scheme): kube-controller-manager and kube-scheduler
// take the same flags; kwok takes its own (extra), after --kubeconfig.
func (c *Cluster) startComponent(ctx context.Context, name, binary, user, scheme string, extra ...string) error {
	kubeconfig := filepath.Join(c.dir, name+".kubeconfig")
	if err := c.writeKubeconfig(kubeconfig, user); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	args := []string{"--kubeconfig=" + kubeconfig}
	if name == "kwok" {
		args = append(args, "--server-address=127.0.0.1:"+strconv.Itoa(port))
	} else {
		args = append(args,
			"--authentication-kubeconfig="+kubeconfig,
			"--authorization-kubeconfig="+kubeconfig,
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port="+strconv.Itoa(port),
			"--cert-dir="+filepath.Join(c.dir, name+"-certs"))
	}
	p, err := startProcess(c.dir, name, binary, append(args, extra...)...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	if c.urls == nil {
		c.urls = map[string]string{}
	}
	c.urls[name] = loopbackURL(scheme, port)
	return waitHealthy(ctx, p, loopbackURL(scheme, port)+"/healthz", nil, "")
}

func (c *Cluster) restConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            c.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.ca},
		// Tests create objects in bursts; client-side throttling at the
		// default 5 QPS would only slow them down.
		QPS:   100,
		Burst: 200,
	}
}

func (c *Cluster) writeKubeconfig(path, user string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthorityData: c.ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: c.users[user].Token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: user}
	cfg.CurrentContext = "test"
	return clientcmd.WriteToFile(*cfg, path)
}

// WriteAdminKubeconfig writes a kubeconfig for AdminUser to path (mode
// 0600), for kubectl.
func (c *Cluster) WriteAdminKubeconfig(path string) error {
	if err := c.writeKubeconfig(path, AdminUser); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

// UserConfig is a client config for a user named in Options.ExtraUsers (or
// AdminUser / ConnectorUser).
func (c *Cluster) UserConfig(name string) (*rest.Config, error) {
	u, ok := c.users[name]
	if !ok || name == controllerManagerUser || name == schedulerUser || name == kwokUser {
		return nil, fmt.Errorf("kubeplane: no user %q: list it in Options.ExtraUsers", name)
	}
	return c.restConfig(u.Token), nil
}

// Logs is the last n lines of every server's log.
func (c *Cluster) Logs(n int) string {
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "--- %s (%s) ---\n%s\n", p.name, p.logPath, p.tail(n))
	}
	return b.String()
}

// LogOffsets marks where each log ends now, so a failing test can show
// only what was logged while it ran (LogsSince).
func (c *Cluster) LogOffsets() map[string]int64 {
	m := map[string]int64{}
	for _, p := range c.procs {
		m[p.name] = logSize(p.logPath)
	}
	return m
}

// LogsSince is the last n lines each server logged after offsets.
func (c *Cluster) LogsSince(offsets map[string]int64, n int) string {
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "--- %s, during the test ---\n%s\n", p.name, tailFrom(p.logPath, offsets[p.name], n))
	}
	return b.String()
}

// Stop ends the servers (newest first) and removes their data and logs.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(3 * time.Second)
	}
	c.procs = nil
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
		c.dir = ""
	}
}

// Dir is the cluster's temporary folder (data, certificates, logs); "" once
// stopped.
func (c *Cluster) Dir() string { return c.dir }

// PIDs are the running servers' process IDs.
func (c *Cluster) PIDs() []int {
	out := make([]int, 0, len(c.procs))
	for _, p := range c.procs {
		out = append(out, p.cmd.Process.Pid)
	}
	return out
}

// moduleRoot walks up from the working directory (a test runs in its
// package folder) to the folder holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("kubeplane: no go.mod above the working directory; set Options.ClusterRoleFile")
		}
		dir = parent
	}
}
