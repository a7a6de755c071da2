package aws

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// ec2Front stands between the connector and moto_server. It passes every
// request on, answers injected errors in EC2's XML, and does what EC2
// documents and moto does not: a RunInstances repeating a ClientToken
// answers the first launch again instead of launching a second instance.
type ec2Front struct {
	*httptest.Server
	moto string

	mu     sync.Mutex
	faults []*ec2Fault
	tokens map[string][]byte // ClientToken → the launch's answer
}

// ec2Fault answers an action (every action when empty) with an error code.
type ec2Fault struct {
	action     string
	status     int
	code       string
	times      int
	afterApply bool // moto applies the request first; its answer is lost
}

func newEC2Front(t *testing.T, moto string) *ec2Front {
	f := &ec2Front{moto: moto, tokens: map[string][]byte{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *ec2Front) inject(fault ec2Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &fault)
}

func (f *ec2Front) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	form, _ := url.ParseQuery(string(body))
	action, token := form.Get("Action"), ""
	if action == "RunInstances" {
		token = form.Get("ClientToken")
	}
	fault := f.take(action)
	if fault != nil && !fault.afterApply {
		writeEC2Error(w, fault)
		return
	}
	status, header, answer := f.forward(r, body, token)
	if fault != nil {
		writeEC2Error(w, fault)
		return
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	_, _ = w.Write(answer)
}

// forward sends the request to moto, or answers a repeated ClientToken
// from the first launch.
func (f *ec2Front) forward(r *http.Request, body []byte, token string) (int, http.Header, []byte) {
	if token != "" {
		f.mu.Lock()
		first, seen := f.tokens[token]
		f.mu.Unlock()
		if seen {
			return http.StatusOK, http.Header{"Content-Type": {"text/xml"}}, first
		}
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, f.moto+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return http.StatusBadGateway, nil, []byte(err.Error())
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return http.StatusBadGateway, nil, []byte(err.Error())
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if token != "" && resp.StatusCode == http.StatusOK {
		f.mu.Lock()
		f.tokens[token] = answer
		f.mu.Unlock()
	}
	return resp.StatusCode, resp.Header, answer
}

func (f *ec2Front) take(action string) *ec2Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, fault := range f.faults {
		if fault.action != "" && fault.action != action {
			continue
		}
		fault.times--
		if fault.times <= 0 {
			f.faults = append(f.faults[:i], f.faults[i+1:]...)
		}
		return fault
	}
	return nil
}

// writeEC2Error writes EC2's documented error envelope.
func writeEC2Error(w http.ResponseWriter, fault *ec2Fault) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(fault.status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>%s</Code><Message>injected %s</Message></Error></Errors><RequestID>front-1</RequestID></Response>`,
		fault.code, fault.code)
}
