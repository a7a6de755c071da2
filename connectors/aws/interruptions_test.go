package aws

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
)

// eventBody is an EventBridge event as it lands in the queue, in the shape
// EC2 documents for its spot interruption warning and rebalance
// recommendation.
func eventBody(detailType, instanceID string, at time.Time) string {
	return fmt.Sprintf(`{"version":"0","id":"%s-evt","detail-type":%q,"source":"aws.ec2","account":"123456789012","time":%q,"region":"us-east-1","resources":["arn:aws:ec2:us-east-1a:instance/%s"],"detail":{"instance-id":%q,"instance-action":"terminate"}}`,
		instanceID, detailType, at.UTC().Format(time.RFC3339), instanceID, instanceID)
}

func queueMessages(t *testing.T, p *Provider, url string) int {
	t.Helper()
	res, err := p.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	require.NoError(t, err)
	var n, hidden int
	fmt.Sscan(res.Attributes["ApproximateNumberOfMessages"], &n)
	fmt.Sscan(res.Attributes["ApproximateNumberOfMessagesNotVisible"], &hidden)
	return n + hidden
}

func TestInterruptionQueueMessagesBecomeNoticesForThePoolsInstances(t *testing.T) {
	ctx := context.Background()
	p, _ := newEC2Provider(t)
	q, err := p.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("visor-interruptions")})
	require.NoError(t, err)
	url := aws.ToString(q.QueueUrl)
	p.cfg.InterruptionQueue = "visor-interruptions" // by name, as a clusters file writes it

	pool, other := testPool("spot-notices"), testPool("spot-others")
	mine := createGroup(t, p, connectors.NodeGroupSpec{Pool: pool, Size: "c6i.large", TargetSize: 2}, connectors.IdempotencyKey(pool.WorkflowID()+"/1"))
	theirs := createGroup(t, p, connectors.NodeGroupSpec{Pool: other, Size: "c6i.large", TargetSize: 1}, connectors.IdempotencyKey(other.WorkflowID()+"/1"))
	victim, rebalanced, foreign := mine.Instances[0], mine.Instances[1], theirs.Instances[0]
	at := time.Now().UTC().Truncate(time.Second)
	send := func(body string) string {
		res, err := p.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)})
		require.NoError(t, err)
		return aws.ToString(res.MessageId)
	}
	spotID := send(eventBody(detailSpotInterruption, victim.ID, at))
	rebalanceID := send(eventBody(detailRebalance, rebalanced.ID, at))
	foreignID := send(eventBody(detailSpotInterruption, foreign.ID, at))
	send(`{"source":"aws.ec2","detail-type":"EC2 Instance State-change Notification","time":"2026-01-01T00:00:00Z","detail":{"instance-id":"i-1","state":"stopping"}}`)
	send("not json")

	got, err := p.Interruptions(ctx, pool)
	require.NoError(t, err)
	byID := map[string]connectors.Interruption{}
	for _, n := range got {
		byID[n.ID] = n
	}
	require.Len(t, got, 2, "the pool's two notices, not the other pool's: %+v", got)
	spot := byID[spotID]
	require.Equal(t, connectors.Interruption{InstanceID: victim.ID, NodeName: victim.Name, Kind: connectors.InterruptionSpot,
		NoticeAt: at, Deadline: at.Add(2 * time.Minute), ID: spotID}, spot)
	require.Equal(t, connectors.InterruptionRebalance, byID[rebalanceID].Kind)
	require.True(t, byID[rebalanceID].Deadline.IsZero())

	// The other pool's message was left for it, at once; the ones neither
	// pool handles were dropped.
	theirsGot, err := p.Interruptions(ctx, other)
	require.NoError(t, err)
	require.Len(t, theirsGot, 1)
	require.Equal(t, foreignID, theirsGot[0].ID)
	require.Equal(t, foreign.ID, theirsGot[0].InstanceID)
	require.Equal(t, 3, queueMessages(t, p, url), "unknown and unparseable messages were deleted")

	// Acknowledge = DeleteMessage; a repeat is success.
	require.NoError(t, p.Acknowledge(ctx, pool, []string{spotID, rebalanceID}))
	require.NoError(t, p.Acknowledge(ctx, pool, []string{spotID}))
	require.Equal(t, 1, queueMessages(t, p, url), "the pool's messages are deleted, the other pool's kept")

	// Another worker acknowledges a message it never received: it finds
	// it in the queue by its ID (once visible again) and deletes it.
	fresh := &Provider{cfg: p.cfg, sqs: p.sqs, ec2: p.ec2, asg: p.asg, eks: p.eks, mode: p.mode, catalog: p.catalog}
	_, err = p.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(p.notices.receipts[foreignID]), VisibilityTimeout: 0})
	require.NoError(t, err)
	require.NoError(t, fresh.Acknowledge(ctx, other, []string{foreignID}))
	require.Equal(t, 0, queueMessages(t, p, url))

	// No queue configured: the pool is told there is no source.
	p.cfg.InterruptionQueue = ""
	_, err = p.Interruptions(ctx, pool)
	require.ErrorIs(t, err, connectors.ErrNoInterruptions)
}
