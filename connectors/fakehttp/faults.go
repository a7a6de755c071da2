// Package fakehttp is what the loopback fakes of provider APIs share: a
// log of the requests received and faults injected in front of the fake's
// own handler, including faults that let the request take effect and then
// answer an error, as a server that fails after its write does.
package fakehttp

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
)

// Fault makes matching requests fail.
type Fault struct {
	Method string // empty matches any method
	Path   string // exact URL path; empty matches any path
	// Match, when set, must also hold: for APIs that name the action in a
	// header (AWS JSON's X-Amz-Target) rather than the path.
	Match func(r *http.Request) bool
	// Skip lets this many matching requests through before the fault hits.
	Skip int
	// Times is how many requests it hits; zero means once.
	Times int
	// AfterApply hands the request to the fake first, so its write
	// happens, then answers the fault instead of the fake's answer.
	AfterApply bool

	Status int
	Header http.Header
	// Body is sent as application/json when not empty.
	Body []byte
}

// Faults wraps a fake's handler with injected faults and a request log.
// It is safe for concurrent use.
type Faults struct {
	mu       sync.Mutex
	faults   []*Fault
	requests []string
}

// Inject queues a fault; faults are matched in the order injected.
func (f *Faults) Inject(fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fault.Times == 0 {
		fault.Times = 1
	}
	f.faults = append(f.faults, &fault)
}

// Requests lists "METHOD /path?query" of every request received, in order.
func (f *Faults) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// Count is how many requests received contain part in "METHOD /path?query".
func (f *Faults) Count(part string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if strings.Contains(r, part) {
			n++
		}
	}
	return n
}

// Wrap puts the faults in front of next.
func (f *Faults) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fault := f.take(r)
		switch {
		case fault == nil:
			next.ServeHTTP(w, r)
		case fault.AfterApply:
			next.ServeHTTP(httptest.NewRecorder(), r)
			fault.write(w)
		default:
			fault.write(w)
		}
	})
}

// take logs r and returns the fault it hits, if any.
func (f *Faults) take(r *http.Request) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	for i, fault := range f.faults {
		if (fault.Method != "" && fault.Method != r.Method) || (fault.Path != "" && fault.Path != r.URL.Path) || (fault.Match != nil && !fault.Match(r)) {
			continue
		}
		if fault.Skip > 0 {
			fault.Skip--
			return nil
		}
		fault.Times--
		if fault.Times == 0 {
			f.faults = slices.Delete(f.faults, i, i+1)
		}
		return fault
	}
	return nil
}

func (fault *Fault) write(w http.ResponseWriter) {
	for k, v := range fault.Header {
		w.Header()[k] = v
	}
	if len(fault.Body) > 0 {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(fault.Status)
	_, _ = w.Write(fault.Body)
}

// CountPrefix counts the lines (Requests, say) that start with prefix.
func CountPrefix(lines []string, prefix string) int { return count(lines, prefix, strings.HasPrefix) }

// CountContaining counts the lines that contain part.
func CountContaining(lines []string, part string) int { return count(lines, part, strings.Contains) }

func count(lines []string, s string, match func(line, s string) bool) int {
	n := 0
	for _, l := range lines {
		if match(l, s) {
			n++
		}
	}
	return n
}
