package aws

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// One moto_server serves every test in the package; tests keep apart by
// using their own pool keys and names.
var (
	motoEndpoint string
	motoSkip     string
)

func TestMain(m *testing.M) {
	stop, err := startMoto()
	if err != nil {
		fmt.Fprintln(os.Stderr, "aws connector tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startMoto runs moto_server on a free loopback port. When it is not
// installed, moto-backed tests skip and say so, except under CI=true, where
// CI promised to run them; when it is installed but does not come up, that
// is a failure.
func startMoto() (stop func(), err error) {
	bin, lookErr := exec.LookPath("moto_server")
	if lookErr != nil && os.Getenv("CI") == "true" {
		return nil, errors.New("moto_server is not on PATH and CI=true: the AWS API tests must run in CI (moto_server comes with the machine's Python, package moto[server])")
	}
	if lookErr != nil {
		motoSkip = "moto_server is not installed (pip install 'moto[server]'); AWS API tests need it and are skipped"
		return func() {}, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	// Own process group: the pyenv shim may leave a child to reap.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	motoEndpoint = "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(motoEndpoint + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			return stop, nil
		}
		select {
		case <-done:
			return nil, fmt.Errorf("moto_server exited early: %s", logs.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	stop()
	return nil, errors.New("moto_server did not answer within 60s: " + logs.String())
}

func needMoto(t *testing.T) {
	t.Helper()
	if motoSkip != "" {
		t.Skip(motoSkip)
	}
}

// newTestProvider builds a provider against moto; the credential comes
// through an env: reference as it would on a worker.
func newTestProvider(t *testing.T, cfg Config) *Provider {
	t.Helper()
	needMoto(t)
	t.Setenv("VISOR_TEST_AWS_CREDENTIAL", "AKIDTESTING:secrettesting")
	cfg.Credentials = "env:VISOR_TEST_AWS_CREDENTIAL"
	cfg.Endpoint = motoEndpoint
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	p, err := New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func testPool(service string) types.PoolKey {
	return types.PoolKey{Org: "acme", Project: "shop", Service: service, Provider: "aws", Cluster: "prod-1"}
}

// motoFixture is what a real account would already have: a subnet, an
// image and a base launch template.
type motoFixture struct {
	subnet, image, template string
}

var motoImage struct {
	once sync.Once
	id   string
}

func newMotoFixture(t *testing.T, p *Provider, templateName string) motoFixture {
	t.Helper()
	ctx := context.Background()
	subnets, err := p.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	if err != nil || len(subnets.Subnets) == 0 {
		t.Fatalf("moto has no default subnet: %v", err)
	}
	motoImage.once.Do(func() {
		// Listing moto's images takes seconds, so it is done once.
		images, err := p.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
		if err == nil && len(images.Images) > 0 {
			motoImage.id = aws.ToString(images.Images[0].ImageId)
		}
	})
	if motoImage.id == "" {
		t.Fatal("moto has no images")
	}
	f := motoFixture{subnet: aws.ToString(subnets.Subnets[0].SubnetId), image: motoImage.id, template: templateName}
	_, err = p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(templateName),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(f.image), InstanceType: ec2types.InstanceTypeT3Micro},
	})
	if err != nil && errorCode(err) != "InvalidLaunchTemplateName.AlreadyExistsException" {
		t.Fatalf("create base launch template: %v", err)
	}
	return f
}

func findGroup(t *testing.T, p *Provider, pool types.PoolKey, id string) connectors.NodeGroup {
	t.Helper()
	groups, err := p.NodeGroups(context.Background(), pool)
	if err != nil {
		t.Fatalf("NodeGroups: %v", err)
	}
	for _, g := range groups {
		if g.ID == id {
			return g
		}
	}
	t.Fatalf("group %s not listed for pool %s (got %d groups)", id, pool, len(groups))
	return connectors.NodeGroup{}
}

func instanceIDs(g connectors.NodeGroup) map[string]bool {
	ids := map[string]bool{}
	for _, i := range g.Instances {
		ids[i.ID] = true
	}
	return ids
}
