// Package webui drives headless Chromium against the Temporal Web UI that
// `visor dev` serves, to check a pool is readable there without the CLI.
//
// Chromium is driven through the DevTools protocol over
// --remote-debugging-pipe (NUL-separated JSON on file descriptors 3 and 4),
// which needs no WebSocket library and no debugging port.
package webui

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Browser is one headless Chromium process.
type Browser struct {
	cmd     *exec.Cmd
	toPipe  *os.File
	stderr  *strings.Builder
	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan cdpReply
	done    chan struct{}
	readErr error
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ChromiumFlags are the flags every run uses: headless, no sandbox (CI runs
// as root), and nothing that reaches the network by itself.
func ChromiumFlags(userDataDir string) []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--window-size=1440,1000",
		"--user-data-dir=" + userDataDir, "--remote-debugging-pipe",
	}
}

// Launch starts Chromium at path with a fresh profile in userDataDir.
func Launch(path, userDataDir string) (*Browser, error) {
	// Chromium reads commands from fd 3 and writes replies to fd 4.
	cmdRead, toPipe, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	fromPipe, replyWrite, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	b := &Browser{toPipe: toPipe, stderr: &strings.Builder{}, waiting: map[int64]chan cdpReply{}, done: make(chan struct{})}
	b.cmd = exec.Command(path, append(ChromiumFlags(userDataDir), "about:blank")...)
	b.cmd.ExtraFiles = []*os.File{cmdRead, replyWrite}
	b.cmd.Stderr = &lockedWriter{w: b.stderr}
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	cmdRead.Close()
	replyWrite.Close()
	go b.readReplies(fromPipe)
	return b, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (b *Browser) readReplies(r io.ReadCloser) {
	defer close(b.done)
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.readErr = err
			b.mu.Unlock()
			return
		}
		var m struct {
			ID int64 `json:"id"`
			cdpReply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == 0 {
			continue // an event; nothing here subscribes to them
		}
		b.mu.Lock()
		ch := b.waiting[m.ID]
		delete(b.waiting, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m.cdpReply
		}
	}
}

// call sends one DevTools command and waits for its reply.
func (b *Browser) call(ctx context.Context, session, method string, params any, result any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpReply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := b.toPipe.Write(append(raw, 0)); err != nil {
		return fmt.Errorf("%s: write to chromium: %w (stderr: %s)", method, err, b.Stderr())
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return fmt.Errorf("%s: %s (code %d)", method, r.Error.Message, r.Error.Code)
		}
		if result != nil {
			return json.Unmarshal(r.Result, result)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("%s: chromium closed the pipe (%v); stderr: %s", method, b.readErr, b.Stderr())
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Stderr is what Chromium has logged so far, for failure messages.
func (b *Browser) Stderr() string {
	lw := b.cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return b.stderr.String()
}

// Close asks Chromium to exit and waits for it, killing it if it lingers.
func (b *Browser) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", map[string]any{}, nil)
	b.toPipe.Close()
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-exited
	}
	return nil
}

// Page is one tab.
type Page struct {
	b       *Browser
	session string
}

// NewPage opens a blank tab and attaches to it.
func (b *Browser) NewPage(ctx context.Context) (*Page, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	p := &Page{b: b, session: attached.SessionID}
	for _, domain := range []string{"Page.enable", "Runtime.enable"} {
		if err := b.call(ctx, p.session, domain, map[string]any{}, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Navigate loads url in the tab.
func (p *Page) Navigate(ctx context.Context, url string) error {
	var res struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.b.call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, &res); err != nil {
		return err
	}
	if res.ErrorText != "" {
		return fmt.Errorf("navigate to %s: %s", url, res.ErrorText)
	}
	return nil
}

// Eval runs a JavaScript expression and decodes its JSON-able value.
func (p *Page) Eval(ctx context.Context, expr string, into any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := p.b.call(ctx, p.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res); err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("evaluate %q: %s", expr, res.ExceptionDetails.Text)
	}
	return json.Unmarshal(res.Result.Value, into)
}

// WaitFor evaluates expr every 250 ms until it yields a non-empty value
// (not null, false, "" or []) and decodes that value into into.
func (p *Page) WaitFor(ctx context.Context, what, expr string, into any) error {
	var last json.RawMessage
	for {
		err := p.Eval(ctx, expr, &last)
		if err == nil {
			switch strings.TrimSpace(string(last)) {
			case "", "null", "false", `""`, "[]":
			default:
				return json.Unmarshal(last, into)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last value %s, last error %v)", what, ctx.Err(), last, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Screenshot writes a PNG of the tab's viewport to path.
func (p *Page) Screenshot(ctx context.Context, path string) error {
	var shot struct {
		Data string `json:"data"`
	}
	if err := p.b.call(ctx, p.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return err
	}
	if len(png) == 0 {
		return errors.New("empty screenshot")
	}
	return os.WriteFile(path, png, 0o644)
}
