package kubeplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// writeServiceAccountKeys writes the RSA key pair kube-apiserver signs and
// verifies service-account tokens with.
func writeServiceAccountKeys(dir string) (privPath, pubPath string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", err
	}
	privPath = filepath.Join(dir, "sa.key")
	pubPath = filepath.Join(dir, "sa.pub")
	if err := writePEM(privPath, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return "", "", err
	}
	if err := writePEM(pubPath, "PUBLIC KEY", pub); err != nil {
		return "", "", err
	}
	return privPath, pubPath, nil
}

// servingCert is a self-signed TLS certificate for 127.0.0.1; clients trust
// exactly it (CAPEM), so TLS is verified rather than skipped.
type servingCert struct {
	CertPath, KeyPath string
	CAPEM             []byte
}

func writeServingCert(dir string) (servingCert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return servingCert{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return servingCert{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "visor-kubeapi-test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return servingCert{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return servingCert{}, err
	}
	c := servingCert{CertPath: filepath.Join(dir, "serving.crt"), KeyPath: filepath.Join(dir, "serving.key")}
	if err := writePEM(c.CertPath, "CERTIFICATE", der); err != nil {
		return servingCert{}, err
	}
	if err := writePEM(c.KeyPath, "EC PRIVATE KEY", keyDER); err != nil {
		return servingCert{}, err
	}
	c.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return c, nil
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

// staticUser is one line of kube-apiserver's --token-auth-file.
type staticUser struct {
	Name   string
	Token  string
	Groups []string
}

func newStaticUser(name string, groups ...string) (staticUser, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return staticUser{}, err
	}
	return staticUser{Name: name, Token: hex.EncodeToString(b), Groups: groups}, nil
}

// writeTokenFile writes token,user,uid,"group1,group2" lines.
func writeTokenFile(path string, users []staticUser) error {
	var b strings.Builder
	for _, u := range users {
		fmt.Fprintf(&b, "%s,%s,%s", u.Token, u.Name, u.Name)
		if len(u.Groups) > 0 {
			fmt.Fprintf(&b, ",%q", strings.Join(u.Groups, ","))
		}
		b.WriteString("\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}
