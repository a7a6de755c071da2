package webui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/examples"
	"github.com/hanzoai/visor-fleet/internal/devserver"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
)

// chromium finds the browser or decides the test's fate: it runs when asked
// (VISOR_WEBUI_TEST=1) or in CI (CI=true), and there a missing browser is a
// failure, not a skip.
func chromium(t *testing.T) string {
	asked := os.Getenv("VISOR_WEBUI_TEST") == "1"
	ci := os.Getenv("CI") == "true"
	if !asked && !ci {
		t.Skip("browser test: set VISOR_WEBUI_TEST=1 to run it (CI=true runs it too)")
	}
	path := "/usr/bin/chromium"
	if p := os.Getenv("VISOR_CHROMIUM"); p != "" {
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("browser test needs Debian's chromium at %s (apt-get install -y chromium; .ci/run installs it): %v", path, err)
	}
	return path
}

// artifactsDir is <repo>/artifacts, created if missing.
func artifactsDir(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	out := filepath.Join(dir, "artifacts")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWebUIShowsPoolState runs the embedded stack with the demo pools and
// the Web UI on free loopback ports, then, in headless Chromium: opens the
// workflow list filtered by VisorOrg, finds the org's pools and only them,
// opens one, and reads its state from the current details and from the
// search attributes. Payloads are encrypted at rest, so the details the page
// shows were decoded by visor dev's codec server; the test checks that the
// same details read raw from the frontend are ciphertext. Screenshots go to
// <repo>/artifacts/, and with VISOR_UPDATE_SCREENSHOTS=1 the list's and the
// pool's to docs/screenshots/ for the README.
func TestWebUIShowsPoolState(t *testing.T) {
	browserPath := chromium(t)
	started := time.Now()
	spec, err := starter.ParseSpecFile("examples/pools.yaml", examples.Pools)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	stack, err := devstack.Start(ctx, devstack.Options{
		Server: devserver.Options{Memory: true, IP: "127.0.0.1", GRPCPort: testsuite.FreePort(t), UIPort: testsuite.FreePort(t), LogLevel: "error"},
		Spec:   spec, SimTick: 200 * time.Millisecond, ProvisionDelay: time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("start visor dev stack: %v", err)
	}
	defer func() { _ = stack.Stop() }()
	ui := stack.Server.UIAddress()
	if stack.Server.CodecAddress() == "" {
		t.Fatal("visor dev runs no codec server: the Web UI could not decode payloads")
	}
	ns := stack.Server.Namespace()

	// The demo's acme pools, once each has published its state.
	var acme []string
	for _, p := range spec.Pools {
		if p.Key.Org == "acme" {
			acme = append(acme, p.Key.WorkflowID())
		}
	}
	waitForPublishedPools(ctx, t, stack, acme)
	t.Logf("stack up and %d acme pools published in %s", len(acme), time.Since(started).Round(time.Millisecond))

	b, err := Launch(browserPath, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	page, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shots := artifactsDir(t)

	// 1. The list, filtered by the org's search attribute.
	listURL := fmt.Sprintf("%s/namespaces/%s/workflows?query=%s", ui, ns, url.QueryEscape(`VisorOrg="acme"`))
	if err := page.Navigate(ctx, listURL); err != nil {
		t.Fatal(err)
	}
	var hrefs []string
	err = page.WaitFor(ctx, "both acme pools in the filtered list", fmt.Sprintf(`(() => {
		const hrefs = [...new Set(Array.from(document.querySelectorAll('a[href*="/workflows/pool%%2F"]')).map(a => a.getAttribute('href')))];
		return hrefs.length >= %d ? hrefs : null;
	})()`, len(acme)), &hrefs)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, h := range hrefs {
		id := workflowIDFromHref(t, h)
		if !strings.HasPrefix(id, "pool/acme/") {
			t.Errorf("the list filtered by VisorOrg=acme shows %s", id)
		}
		listed[id] = h
	}
	for _, id := range acme {
		if listed[id] == "" {
			t.Errorf("pool %s is missing from the filtered list (found %v)", id, hrefs)
		}
	}
	if err := page.Screenshot(ctx, filepath.Join(shots, "webui-pool-list.png")); err != nil {
		t.Fatal(err)
	}

	// 2. The pool's page: its current details say its state.
	poolID := acme[0]
	poolPage := ui + strings.TrimSuffix(strings.SplitN(listed[poolID], "?", 2)[0], "/timeline")
	if err := page.Navigate(ctx, poolPage+"/user-metadata"); err != nil {
		t.Fatal(err)
	}
	var details string
	err = page.WaitFor(ctx, "the pool's current details", `(() => {
		for (const f of document.querySelectorAll('iframe')) {
			const text = f.contentDocument && f.contentDocument.body ? f.contentDocument.body.innerText : '';
			if (text.includes('nodes ') && text.includes('(target ')) return text;
		}
		return null;
	})()`, &details)
	if err != nil {
		t.Fatal(err)
	}
	details = strings.TrimSpace(regexp.MustCompile(`\s*\n\s*`).ReplaceAllString(details, "\n"))
	t.Logf("current details of %s:\n%s", poolID, details)
	key := spec.Pools[slices.IndexFunc(spec.Pools, func(p starter.PoolEntry) bool { return p.Key.WorkflowID() == poolID })].Key
	state := strings.Fields(details)[0]
	if !slices.Contains(starter.PoolStates, state) {
		t.Errorf("details start with %q, not a pool state (%v)", state, starter.PoolStates)
	}
	if want := fmt.Sprintf("%s/%s/%s on %s (%s)", key.Org, key.Project, key.Service, key.Cluster, key.Provider); !strings.Contains(details, want) {
		t.Errorf("details do not name the pool (%q)", want)
	}
	if !regexp.MustCompile(`nodes \d+ \(target \d+, floor 1, ceiling 8\)`).MatchString(details) {
		t.Errorf("details do not show nodes, target, floor 1 and ceiling 8")
	}
	if err := page.Screenshot(ctx, filepath.Join(shots, "webui-pool-details.png")); err != nil {
		t.Fatal(err)
	}
	// What the page shows is only readable through the codec server: the
	// same details, fetched raw from the frontend, are AES-GCM ciphertext.
	assertDetailsEncryptedAtFrontend(ctx, t, stack, poolID, state)

	// 3. The same page's search attributes carry the state for filtering.
	if err := page.Navigate(ctx, poolPage+"/search-attributes"); err != nil {
		t.Fatal(err)
	}
	var saState string
	err = page.WaitFor(ctx, "VisorState among the search attributes", `(() => {
		const text = document.body.innerText;
		const m = text.match(/"VisorState":\s*"([^"]+)"/);
		return m && text.includes('"VisorOrg": "acme"') ? m[1] : null;
	})()`, &saState)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(starter.PoolStates, saState) {
		t.Errorf("VisorState %q is not a pool state", saState)
	}
	if err := page.Screenshot(ctx, filepath.Join(shots, "webui-pool-search-attributes.png")); err != nil {
		t.Fatal(err)
	}
	t.Logf("pool %s shows state %q (details) and VisorState %q; screenshots in %s; total %s",
		poolID, state, saState, shots, time.Since(started).Round(time.Millisecond))
	updateDocScreenshots(t, shots, "webui-pool-list.png", "webui-pool-details.png")
}

// waitForPublishedPools waits until every pool lists with a VisorState
// other than the starter's placeholder.
func waitForPublishedPools(ctx context.Context, t *testing.T, stack *devstack.Stack, ids []string) {
	t.Helper()
	for {
		pools, err := starter.ListPools(ctx, stack.Client, stack.Server.Namespace(), starter.PoolFilter{Org: "acme"})
		published := 0
		for _, p := range pools {
			if slices.Contains(ids, p.ID) && p.State != "" && p.State != "starting" {
				published++
			}
		}
		if err == nil && published == len(ids) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("demo pools %v not published: %v (last list error %v)", ids, ctx.Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func workflowIDFromHref(t *testing.T, href string) string {
	t.Helper()
	// /namespaces/<ns>/workflows/<escaped id>/<run id>/<tab>
	parts := strings.Split(strings.SplitN(href, "?", 2)[0], "/")
	if len(parts) < 5 {
		t.Fatalf("unexpected workflow link %q", href)
	}
	id, err := url.PathUnescape(parts[4])
	if err != nil {
		t.Fatalf("workflow link %q: %v", href, err)
	}
	return id
}
