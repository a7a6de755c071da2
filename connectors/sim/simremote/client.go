package simremote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// Client is one remote simulated cluster: its cloud (a Provider and
// LeakFinder), its observer and its drainer.
type Client struct {
	base     string // http://host:port/v1/<cluster>/
	provider string
	http     *http.Client
}

// New is the client of cluster on the sim host at endpoint (http://host:port).
// provider names the cloud in errors raised here, before the host answers.
func New(endpoint, cluster, provider string) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("sim endpoint %q: want http://host:port", endpoint)
	}
	return &Client{
		base:     strings.TrimSuffix(endpoint, "/") + pathPrefix + url.PathEscape(cluster) + "/",
		provider: provider,
		// No client timeout: each call is bounded by its context (the
		// activity's), and a drain streams for as long as it takes.
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: time.Minute}},
	}, nil
}

// Cluster is the connectors.Cluster this client serves.
func (c *Client) Cluster(id string) connectors.Cluster {
	return connectors.Cluster{ID: id, Provider: connectors.Checked(c), Observer: c, Drainer: c}
}

func (c *Client) post(ctx context.Context, op string, in call) (*http.Response, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, errclass.New(errclass.Permanent, c.provider, op, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+op, bytes.NewReader(body))
	if err != nil {
		return nil, errclass.New(errclass.Permanent, c.provider, op, err)
	}
	req.Header.Set("Content-Type", contentJSON)
	resp, err := c.http.Do(req)
	if err != nil {
		// The host is down or restarting: worth a retry.
		return nil, errclass.New(errclass.Retryable, c.provider, op, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		// The host answers its own refusals (no such cluster, a bad body)
		// with 4xx; a 5xx is the host, or a proxy before it, failing now,
		// perhaps after the call took effect: a retry with the key finds it.
		class := errclass.Permanent
		if resp.StatusCode >= 500 {
			class = errclass.Retryable
		}
		return nil, errclass.New(class, c.provider, op, fmt.Errorf("sim host answered %s: %s", resp.Status, strings.TrimSpace(string(msg))))
	}
	return resp, nil
}

func (c *Client) do(ctx context.Context, op string, in call) (reply, error) {
	resp, err := c.post(ctx, op, in)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	var out reply
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return reply{}, errclass.New(errclass.Retryable, c.provider, op, fmt.Errorf("sim host reply: %w", err))
	}
	return out, out.Err.err()
}

// Name is the provider's name, as the host's sim has it.
func (c *Client) Name() string { return c.provider }

func (c *Client) Catalog(ctx context.Context) ([]types.InstanceType, error) {
	out, err := c.do(ctx, opCatalog, call{})
	return out.Catalog, err
}

func (c *Client) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	out, err := c.do(ctx, connectors.OpNodeGroups, call{Pool: pool})
	return out.Groups, err
}

func (c *Client) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	_, err := c.do(ctx, connectors.OpSetTargetSize, call{GroupID: groupID, Target: target, Key: key})
	return err
}

func (c *Client) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	out, err := c.do(ctx, connectors.OpCreateNodeGroup, call{Spec: spec, Key: key})
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	if out.Group == nil {
		return connectors.NodeGroup{}, errclass.New(errclass.Retryable, c.provider, connectors.OpCreateNodeGroup, errors.New("sim host reply has no group"))
	}
	return *out.Group, nil
}

func (c *Client) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, key connectors.IdempotencyKey) error {
	_, err := c.do(ctx, connectors.OpDeleteNodes, call{GroupID: groupID, Nodes: nodeNames, Key: key})
	return err
}

func (c *Client) DeleteNodeGroup(ctx context.Context, groupID string, key connectors.IdempotencyKey) error {
	_, err := c.do(ctx, connectors.OpDeleteNodeGroup, call{GroupID: groupID, Key: key})
	return err
}

func (c *Client) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	out, err := c.do(ctx, connectors.OpLeakedInstances, call{Pool: pool})
	return out.Instances, err
}

func (c *Client) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, key connectors.IdempotencyKey) error {
	_, err := c.do(ctx, connectors.OpDeleteInstances, call{Pool: pool, IDs: ids, Key: key})
	return err
}

func (c *Client) ObserveCluster(ctx context.Context) (connectors.ClusterObservation, error) {
	out, err := c.do(ctx, opObserve, call{})
	if err != nil {
		return connectors.ClusterObservation{}, err
	}
	if out.Observation == nil {
		return connectors.ClusterObservation{}, errclass.New(errclass.Retryable, c.provider, opObserve, errors.New("sim host reply has no observation"))
	}
	return *out.Observation, nil
}

func (c *Client) Uncordon(ctx context.Context, node string) error {
	_, err := c.do(ctx, opUncordon, call{Node: node})
	return err
}

// Drain reads the host's progress lines, passing each to opts.Progress,
// until the result line.
func (c *Client) Drain(ctx context.Context, node string, opts connectors.DrainOptions) (connectors.DrainResult, error) {
	resp, err := c.post(ctx, opDrain, call{Node: node, Deadline: opts.Deadline, EvictionRetry: opts.EvictionRetry})
	if err != nil {
		return connectors.DrainResult{}, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var line reply
		if err := dec.Decode(&line); err != nil {
			return connectors.DrainResult{}, errclass.New(errclass.Retryable, c.provider, opDrain, fmt.Errorf("sim host drain of %s ended without a result: %w", node, err))
		}
		switch {
		case line.Progress != nil:
			if opts.Progress != nil {
				opts.Progress(*line.Progress)
			}
		case line.Err != nil:
			return connectors.DrainResult{}, line.Err.err()
		case line.Drained != nil:
			return *line.Drained, nil
		}
	}
}
