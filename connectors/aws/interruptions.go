package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

var _ connectors.InterruptionSource = (*Provider)(nil)

// The EventBridge events Karpenter's interruption queue receives, by
// detail-type, that a pool acts on or counts.
const (
	detailSpotInterruption = "EC2 Spot Instance Interruption Warning"
	detailRebalance        = "EC2 Instance Rebalance Recommendation"
)

// spotNotice is how long EC2 gives a spot instance after the warning.
const spotNotice = 2 * time.Minute

// Bounds of one read: receives of ten messages (SQS's most) until one
// comes back empty, at most maxReceives of them.
const (
	maxReceives = 10
	maxReceipts = 1000
)

// eventBridgeEvent is an EventBridge event as the SQS message body carries
// it (the EC2 spot interruption warning and rebalance recommendation share
// its shape).
type eventBridgeEvent struct {
	ID         string    `json:"id"`
	DetailType string    `json:"detail-type"`
	Source     string    `json:"source"`
	Time       time.Time `json:"time"`
	Resources  []string  `json:"resources"`
	Detail     struct {
		InstanceID     string `json:"instance-id"`
		InstanceAction string `json:"instance-action"`
	} `json:"detail"`
}

// notices is the queue's client side: its URL once resolved, and the
// receipt handle of each message this process last received, which
// DeleteMessage needs.
type notices struct {
	mu       sync.Mutex
	url      string
	receipts map[string]string // message ID → receipt handle
}

// Interruptions reads the interruption queue (Config.InterruptionQueue,
// fed by EventBridge rules as Karpenter's is) and returns the spot
// interruption warnings and rebalance recommendations for the pool's
// instances. A message for another instance is left alone (made visible
// again at once) for the pool it belongs to; a message that is not one of
// those two events from aws.ec2 is dropped (deleted), as Karpenter drops
// what it does not handle. Messages stay in the queue until Acknowledge.
func (p *Provider) Interruptions(ctx context.Context, pool types.PoolKey) ([]connectors.Interruption, error) {
	const op = "Interruptions"
	if p.cfg.InterruptionQueue == "" {
		return nil, connectors.ErrNoInterruptions
	}
	url, err := p.queueURL(ctx)
	if err != nil {
		return nil, err
	}
	groups, err := p.NodeGroups(ctx, pool)
	if err != nil {
		return nil, err
	}
	names := map[string]string{} // the pool's instance IDs → node names
	for _, g := range groups {
		for _, inst := range g.Instances {
			names[inst.ID] = inst.Name
		}
	}
	var out []connectors.Interruption
	var others []sqstypes.ChangeMessageVisibilityBatchRequestEntry
	defer func() { p.release(ctx, url, others) }()
	for range maxReceives {
		res, err := p.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			return nil, p.classify(op+": sqs:ReceiveMessage", err)
		}
		if len(res.Messages) == 0 {
			break
		}
		for _, m := range res.Messages {
			id, handle := aws.ToString(m.MessageId), aws.ToString(m.ReceiptHandle)
			n, ok := parseNotice(aws.ToString(m.Body), id)
			switch {
			case !ok:
				if _, err := p.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(handle)}); err != nil {
					return nil, p.classify(op+": sqs:DeleteMessage", err)
				}
			case !hasInstance(names, n.InstanceID):
				others = append(others, sqstypes.ChangeMessageVisibilityBatchRequestEntry{
					Id: aws.String(fmt.Sprintf("m%d", len(others))), ReceiptHandle: aws.String(handle), VisibilityTimeout: 0})
			default:
				n.NodeName = names[n.InstanceID]
				p.remember(id, handle)
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func hasInstance(names map[string]string, id string) bool {
	_, ok := names[id]
	return ok
}

// parseNotice reads one message body; ok is false for anything but the
// two EC2 events with an instance ID.
func parseNotice(body, messageID string) (connectors.Interruption, bool) {
	var e eventBridgeEvent
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Source != "aws.ec2" || e.Detail.InstanceID == "" || e.Time.IsZero() {
		return connectors.Interruption{}, false
	}
	n := connectors.Interruption{InstanceID: e.Detail.InstanceID, NoticeAt: e.Time, ID: messageID}
	switch e.DetailType {
	case detailSpotInterruption:
		n.Kind, n.Deadline = connectors.InterruptionSpot, e.Time.Add(spotNotice)
	case detailRebalance:
		n.Kind = connectors.InterruptionRebalance
	default:
		return connectors.Interruption{}, false
	}
	return n, true
}

// release makes other pools' messages visible again at once.
func (p *Provider) release(ctx context.Context, url string, entries []sqstypes.ChangeMessageVisibilityBatchRequestEntry) {
	for start := 0; start < len(entries); start += 10 {
		// Best effort: a message not released becomes visible by itself
		// when its visibility timeout ends.
		_, _ = p.sqs.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{
			QueueUrl: aws.String(url), Entries: entries[start:min(start+10, len(entries))]})
	}
}

func (p *Provider) remember(id, handle string) {
	p.notices.mu.Lock()
	defer p.notices.mu.Unlock()
	if p.notices.receipts == nil || len(p.notices.receipts) >= maxReceipts {
		p.notices.receipts = map[string]string{}
	}
	p.notices.receipts[id] = handle
}

// Acknowledge deletes the pool's messages by message ID. A message this
// process did not receive (a read on another worker) is looked for in the
// queue; one not found is success: if it is still there it comes back,
// and the pool, knowing its ID, acknowledges it again.
func (p *Provider) Acknowledge(ctx context.Context, pool types.PoolKey, ids []string) error {
	const op = "Acknowledge"
	if p.cfg.InterruptionQueue == "" {
		return connectors.ErrNoInterruptions
	}
	url, err := p.queueURL(ctx)
	if err != nil {
		return err
	}
	missing := map[string]bool{}
	for _, id := range ids {
		p.notices.mu.Lock()
		handle, ok := p.notices.receipts[id]
		p.notices.mu.Unlock()
		if !ok {
			missing[id] = true
			continue
		}
		if err := p.deleteMessage(ctx, url, handle); err != nil {
			return p.classify(op+": sqs:DeleteMessage", err)
		}
		p.notices.mu.Lock()
		delete(p.notices.receipts, id)
		p.notices.mu.Unlock()
	}
	if len(missing) == 0 {
		return nil
	}
	var others []sqstypes.ChangeMessageVisibilityBatchRequestEntry
	defer func() { p.release(ctx, url, others) }()
	for range maxReceives {
		res, err := p.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			return p.classify(op+": sqs:ReceiveMessage", err)
		}
		if len(res.Messages) == 0 {
			break
		}
		for _, m := range res.Messages {
			handle := aws.ToString(m.ReceiptHandle)
			if !missing[aws.ToString(m.MessageId)] {
				others = append(others, sqstypes.ChangeMessageVisibilityBatchRequestEntry{
					Id: aws.String(fmt.Sprintf("m%d", len(others))), ReceiptHandle: aws.String(handle), VisibilityTimeout: 0})
				continue
			}
			if err := p.deleteMessage(ctx, url, handle); err != nil {
				return p.classify(op+": sqs:DeleteMessage", err)
			}
		}
	}
	return nil
}

// deleteMessage deletes one message; a receipt handle that expired means
// the message is visible again and will be read and acknowledged anew.
func (p *Provider) deleteMessage(ctx context.Context, url, handle string) error {
	_, err := p.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(handle)})
	if err != nil && strings.Contains(errorCode(err), "ReceiptHandleIsInvalid") {
		return nil
	}
	return err
}

// queueURL resolves Config.InterruptionQueue, a queue name or URL, once.
func (p *Provider) queueURL(ctx context.Context) (string, error) {
	p.notices.mu.Lock()
	defer p.notices.mu.Unlock()
	if p.notices.url != "" {
		return p.notices.url, nil
	}
	q := p.cfg.InterruptionQueue
	if strings.HasPrefix(q, "https://") || strings.HasPrefix(q, "http://") {
		p.notices.url = q
		return q, nil
	}
	res, err := p.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(q)})
	if err != nil {
		return "", p.classify("Interruptions: sqs:GetQueueUrl "+q, err)
	}
	p.notices.url = aws.ToString(res.QueueUrl)
	return p.notices.url, nil
}
