package fakehttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaultsSkipHitApplyAndLog(t *testing.T) {
	var f Faults
	writes := 0
	srv := httptest.NewServer(f.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			writes++
		}
		_, _ = io.WriteString(w, "ok")
	})))
	defer srv.Close()

	f.Inject(Fault{Method: http.MethodGet, Path: "/a", Skip: 1, Times: 2, Status: 503})
	f.Inject(Fault{Method: http.MethodPost, Status: 500, AfterApply: true, Body: []byte(`{"x":1}`), Header: http.Header{"Retry-After": {"3"}}})

	status := func(method, path string) (int, http.Header) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	c, _ := status(http.MethodGet, "/a")
	assert.Equal(t, 200, c, "skipped")
	c, _ = status(http.MethodGet, "/b")
	assert.Equal(t, 200, c, "other path")
	c, _ = status(http.MethodGet, "/a")
	assert.Equal(t, 503, c)
	c, _ = status(http.MethodGet, "/a")
	assert.Equal(t, 503, c)
	c, _ = status(http.MethodGet, "/a")
	assert.Equal(t, 200, c, "used up")

	c, h := status(http.MethodPost, "/a")
	assert.Equal(t, 500, c)
	assert.Equal(t, "3", h.Get("Retry-After"))
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, 1, writes, "the write happened behind the 500")

	assert.Equal(t, []string{"GET /a", "GET /b", "GET /a", "GET /a", "GET /a", "POST /a"}, f.Requests())
}
