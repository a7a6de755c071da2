package codec

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/hanzoai/visor-fleet/contract"
)

const canary = "canary-7f3a-reason"

func mustKey(t *testing.T, id string) Key {
	k, err := GenerateKey(id)
	require.NoError(t, err)
	return k
}

func TestDataConverterRoundTrip(t *testing.T) {
	dc := NewDataConverter(Keys{mustKey(t, "k1")})
	in := contract.ScaleRequest{Target: 3, Reason: canary}
	p, err := dc.ToPayload(in)
	require.NoError(t, err)
	require.Equal(t, EncodingEncrypted, string(p.Metadata[converter.MetadataEncoding]))
	require.Equal(t, "k1", string(p.Metadata[MetadataKeyID]))
	require.NotContains(t, string(p.Data), canary, "ciphertext hides the payload")

	var out contract.ScaleRequest
	require.NoError(t, dc.FromPayload(p, &out))
	require.Equal(t, in, out)

	p2, err := dc.ToPayload(in)
	require.NoError(t, err)
	require.NotEqual(t, p.Data, p2.Data, "a fresh nonce each time")
}

func TestRotation(t *testing.T) {
	k1, k2 := mustKey(t, "k1"), mustKey(t, "k2")
	old, err := NewPayloadCodec(Keys{k1})
	require.NoError(t, err)
	plain := []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"` + canary + `"`)}}
	sealedOld, err := old.Encode(plain)
	require.NoError(t, err)

	rotated, err := NewPayloadCodec(Keys{k2, k1})
	require.NoError(t, err)
	got, err := rotated.Decode(sealedOld)
	require.NoError(t, err, "old payloads still open after rotation")
	require.Equal(t, plain[0].Data, got[0].Data)
	sealedNew, err := rotated.Encode(plain)
	require.NoError(t, err)
	require.Equal(t, "k2", string(sealedNew[0].Metadata[MetadataKeyID]), "new payloads use the first key")

	retired, err := NewPayloadCodec(Keys{k2})
	require.NoError(t, err)
	_, err = retired.Decode(sealedOld)
	require.ErrorContains(t, err, `encrypted with key "k1", which this process does not hold`)
	_, err = retired.Decode(sealedNew)
	require.NoError(t, err)

	// Unencrypted history (before the codec was turned on) passes through.
	got, err = retired.Decode(plain)
	require.NoError(t, err)
	require.Equal(t, plain[0], got[0])
}

func TestDecodeRefusesTampering(t *testing.T) {
	k1, k2 := mustKey(t, "k1"), mustKey(t, "k2")
	c, err := NewPayloadCodec(Keys{k1, k2})
	require.NoError(t, err)
	sealed, err := c.Encode([]*commonpb.Payload{{Data: []byte("x")}})
	require.NoError(t, err)

	flipped := &commonpb.Payload{Metadata: sealed[0].Metadata, Data: bytes.Clone(sealed[0].Data)}
	flipped.Data[len(flipped.Data)-1] ^= 1
	_, err = c.Decode([]*commonpb.Payload{flipped})
	require.ErrorContains(t, err, "does not open it")

	relabelled := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(EncodingEncrypted), MetadataKeyID: []byte("k2")}, Data: sealed[0].Data}
	_, err = c.Decode([]*commonpb.Payload{relabelled})
	require.ErrorContains(t, err, "does not open it")

	short := &commonpb.Payload{Metadata: sealed[0].Metadata, Data: []byte{1, 2}}
	_, err = c.Decode([]*commonpb.Payload{short})
	require.ErrorContains(t, err, "truncated")
}

func TestKeysValidateAndFiles(t *testing.T) {
	k1 := mustKey(t, "k1")
	require.ErrorContains(t, Keys{}.Validate(), "none")
	require.ErrorContains(t, Keys{k1, k1}.Validate(), `keys[1]: id "k1" appears twice`)
	require.ErrorContains(t, Keys{{ID: "k", Secret: []byte("short")}}.Validate(), "keys[0] (k): key is 5 bytes, want 32")
	require.ErrorContains(t, Keys{{ID: "bad id", Secret: k1.Secret}}.Validate(), "keys[0]")
	_, err := NewPayloadCodec(Keys{})
	require.Error(t, err)

	dir := filepath.Join(t.TempDir(), "keys")
	path := filepath.Join(dir, "codec-keys.json")
	k2 := mustKey(t, "k2")
	require.NoError(t, SaveKeys(path, Keys{k2, k1}))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	ds, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), ds.Mode().Perm())
	got, err := LoadKeys("file:" + path)
	require.NoError(t, err)
	require.Equal(t, Keys{k2, k1}, got)

	require.NoError(t, os.WriteFile(path, []byte(`{"keys":[{"id":"k1","key":"!!"}]}`), 0o600))
	_, err = LoadKeys("file:" + path)
	require.ErrorContains(t, err, "not base64")
	require.NotContains(t, err.Error(), "!!")
	require.NoError(t, os.WriteFile(path, []byte(`{"keys":[],"extra":1}`), 0o600))
	_, err = LoadKeys("file:" + path)
	require.ErrorContains(t, err, `unknown field "extra"`)
	_, err = LoadKeys("env:VISOR_CODEC_TEST_UNSET")
	require.ErrorContains(t, err, "VISOR_CODEC_TEST_UNSET")
}

func TestCodecServerDecodesForTheUI(t *testing.T) {
	keys := Keys{mustKey(t, "k1")}
	c, err := NewPayloadCodec(keys)
	require.NoError(t, err)
	const uiOrigin = "http://127.0.0.1:8233"
	srv := httptest.NewServer(NewHandler(c, ServerOptions{AllowedOrigins: []string{uiOrigin}}))
	defer srv.Close()

	// What a worker wrote into history.
	p, err := NewDataConverter(keys).ToPayload(contract.ScaleRequest{Target: 3, Reason: canary})
	require.NoError(t, err)

	// The SDK's own remote codec client, as `temporal` tooling uses it.
	remote := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{Endpoint: srv.URL})
	decoded, err := remote.Decode([]*commonpb.Payload{p})
	require.NoError(t, err)
	require.Contains(t, string(decoded[0].Data), canary)
	require.Equal(t, "json/plain", string(decoded[0].Metadata[converter.MetadataEncoding]))

	// The Web UI: a CORS preflight from its origin, then the POST.
	pre, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	pre.Header.Set("Origin", uiOrigin)
	pre.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(pre)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Equal(t, uiOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, resp.Header.Get("Access-Control-Allow-Headers"), "X-Namespace")
	// One preflight serves the page's decode calls for two hours, not 5 s.
	require.Equal(t, "7200", resp.Header.Get("Access-Control-Max-Age"))

	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
	require.NoError(t, err)
	post := func(origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Namespace", "default")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	resp = post(uiOrigin)
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var payloads commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(out.Bytes(), &payloads))
	require.Contains(t, string(payloads.Payloads[0].Data), canary)

	resp = post("https://evil.example")
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "another site's page gets nothing")
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}

func TestCodecServerAuthorize(t *testing.T) {
	c, err := NewPayloadCodec(Keys{mustKey(t, "k1")})
	require.NoError(t, err)
	h := NewHandler(c, ServerOptions{Authorize: func(r *http.Request) error {
		if r.Header.Get("Authorization") != "Bearer ok" {
			return errString("no valid bearer token")
		}
		return nil
	}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/decode", bytes.NewReader([]byte(`{"payloads":[]}`))))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	req := httptest.NewRequest(http.MethodPost, "/decode", bytes.NewReader([]byte(`{"payloads":[]}`)))
	req.Header.Set("Authorization", "Bearer ok")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
}

type errString string

func (e errString) Error() string { return string(e) }

func TestNoKeysSaysWhatIsMissing(t *testing.T) {
	sealed, err := NewDataConverter(Keys{mustKey(t, "k1")}).ToPayload("x")
	require.NoError(t, err)
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), NoKeys{})
	var s string
	require.ErrorContains(t, dc.FromPayload(sealed, &s), `encrypted (key "k1") and this client has no codec keys`)
	plain, err := dc.ToPayload("y")
	require.NoError(t, err)
	require.Equal(t, "json/plain", string(plain.Metadata[converter.MetadataEncoding]))
	require.NoError(t, dc.FromPayload(plain, &s))
	require.Equal(t, "y", s)
}
