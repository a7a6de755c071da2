package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Metadata of an encrypted payload. The encoding marks it, the key ID says
// which key opens it; the original payload (metadata and data) is inside.
const (
	EncodingEncrypted = "binary/encrypted"
	MetadataKeyID     = "encryption-key-id"
)

// PayloadCodec encrypts and decrypts payloads.
type PayloadCodec struct {
	current string
	aeads   map[string]cipher.AEAD
}

var _ converter.PayloadCodec = (*PayloadCodec)(nil)

// NewPayloadCodec builds the codec; it refuses bad keys.
func NewPayloadCodec(keys Keys) (*PayloadCodec, error) {
	if err := keys.Validate(); err != nil {
		return nil, err
	}
	c := &PayloadCodec{current: keys[0].ID, aeads: map[string]cipher.AEAD{}}
	for _, k := range keys {
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("codec key %s: %w", k.ID, err)
		}
		if c.aeads[k.ID], err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("codec key %s: %w", k.ID, err)
		}
	}
	return c, nil
}

// NewDataConverter is the SDK's default converter with payloads encrypted
// by keys. Keys are validated by LoadKeys; bad ones panic here.
func NewDataConverter(keys Keys) converter.DataConverter {
	c, err := NewPayloadCodec(keys)
	if err != nil {
		panic(err)
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// Encode encrypts each payload with the current key. The key ID is bound
// into the ciphertext as additional data, so relabelling it fails.
func (c *PayloadCodec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := c.aeads[c.current]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("encode payload: nonce: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(EncodingEncrypted),
				MetadataKeyID:              []byte(c.current),
			},
			Data: aead.Seal(nonce, nonce, plain, []byte(c.current)),
		}
	}
	return out, nil
}

// Decode decrypts encrypted payloads with the key their metadata names and
// passes other payloads through (history written before encryption).
func (c *PayloadCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		aead, ok := c.aeads[id]
		if !ok {
			return nil, fmt.Errorf("decode payload: encrypted with key %q, which this process does not hold", id)
		}
		data := p.GetData()
		if len(data) < aead.NonceSize()+aead.Overhead() {
			return nil, fmt.Errorf("decode payload: ciphertext under key %q is truncated", id)
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("decode payload: key %q does not open it (tampered or a different key with the same id)", id)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(plain, &orig); err != nil {
			return nil, fmt.Errorf("decode payload: %w", err)
		}
		out[i] = &orig
	}
	return out, nil
}

// NoKeys is the codec of a client without keys: it sends payloads as they
// are and, instead of the SDK's "encoding not supported", says that an
// encrypted payload needs the keys.
type NoKeys struct{}

var _ converter.PayloadCodec = NoKeys{}

// Encode passes payloads through.
func (NoKeys) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) { return payloads, nil }

// Decode passes plain payloads through and refuses encrypted ones clearly.
func (NoKeys) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	for _, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) == EncodingEncrypted {
			return nil, fmt.Errorf("payload is encrypted (key %q) and this client has no codec keys: set --codec-keys or VISOR_CODEC_KEYS", p.GetMetadata()[MetadataKeyID])
		}
	}
	return payloads, nil
}
