//go:build pins

package pinimports

import (
	_ "github.com/aws/aws-sdk-go-v2/aws"
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/service/autoscaling"
	_ "github.com/aws/aws-sdk-go-v2/service/ec2"
	_ "github.com/aws/aws-sdk-go-v2/service/eks"
	_ "github.com/digitalocean/godo"
	_ "github.com/hetznercloud/hcloud-go/v2/hcloud"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/cobra"
	_ "github.com/stretchr/testify/require"
	_ "github.com/temporalio/ui-server/v2/server"
	_ "github.com/vmware/govmomi"
	_ "github.com/vmware/govmomi/simulator"
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/sdk/contrib/opentelemetry"
	_ "go.temporal.io/server/temporal"
	_ "go.temporal.io/server/temporaltest"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/metrics/pkg/client/clientset/versioned"
	_ "modernc.org/sqlite"
	_ "sigs.k8s.io/yaml"
)
