package conformance

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
)

// behaviour is one row of the table: a check run against a fresh double.
type behaviour struct {
	name  string
	check func(t *testing.T, s *subject)
}

// behaviours is the contract every connector shows, in the order Run
// checks it.
var behaviours = []behaviour{
	{"IdempotentProvisioning", idempotentProvisioning},
	{"LostAnswerFoundByList", lostAnswerFoundByList},
	{"DeletionByNameAndID", deletionByNameAndID},
	{"GroupDeletion", groupDeletion},
	{"LeakFinderSparesGroupMembers", leakFinderSparesGroupMembers},
	{"CatalogRowsValid", catalogRowsValid},
	{"CredentialReferenceResolvedInside", credentialReferenceResolvedInside},
}

// Run checks every behaviour, and every Failure, each against a fresh
// double from newDouble, and after each that the double's secret appeared
// in no error, result or log line.
func Run(t *testing.T, newDouble func(t *testing.T) Double) {
	t.Helper()
	for _, b := range behaviours {
		t.Run(b.name, func(t *testing.T) { b.check(t, newSubject(t, newDouble)) })
	}
	for _, f := range Failures {
		t.Run("Refused/"+string(f), func(t *testing.T) { refused(t, newSubject(t, newDouble), f) })
	}
}

// settle bounds how long a double may take to show a change it accepted
// (a clone task, an operation that finishes later).
const settle = 30 * time.Second

// subject is one behaviour's double, called through connectors.Checked,
// with everything the connector said recorded for the secret check.
type subject struct {
	Double
	p   connectors.Provider
	ctx context.Context

	mu   sync.Mutex
	said []string
	logs *syncBuffer
}

func newSubject(t *testing.T, newDouble func(t *testing.T) Double) *subject {
	t.Helper()
	logs := captureLogs(t)
	d := newDouble(t)
	if d.Provider == nil || d.Machines == nil || d.LoseAnswer == nil || d.Refuse == nil {
		t.Fatal("conformance: the Double needs Provider, Machines, LoseAnswer and Refuse")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	s := &subject{Double: d, p: connectors.Checked(d.Provider), ctx: ctx, logs: logs}
	t.Cleanup(func() { s.secretNeverShown(t) })
	return s
}

// record keeps the text of a result and an error for the secret check.
func (s *subject) record(result any, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.said = append(s.said, fmt.Sprintf("%+v", result))
	if err != nil {
		s.said = append(s.said, err.Error(), fmt.Sprintf("%+v", err))
	}
}

func (s *subject) secretNeverShown(t *testing.T) {
	t.Helper()
	if s.Secret == "" {
		return
	}
	s.mu.Lock()
	said := append([]string{s.logs.String()}, s.said...)
	s.mu.Unlock()
	if s.Logs != nil {
		said = append(said, s.Logs())
	}
	for _, text := range said {
		if strings.Contains(text, s.Secret) {
			t.Errorf("conformance: the credential behind %s appeared in what the connector said: %.300q", s.Credential, text)
		}
	}
}

// captureLogs sends slog's default logger, and the log package through it,
// into a buffer for the behaviour's length.
func captureLogs(t *testing.T) *syncBuffer {
	buf := &syncBuffer{}
	oldSlog, oldOut, oldFlags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() {
		slog.SetDefault(oldSlog)
		log.SetOutput(oldOut)
		log.SetFlags(oldFlags)
	})
	return buf
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
