// Package apitls secures the connection to Cairn's HTTP API, which
// agents (node tokens, step records, per-apply secrets) and the CLI (the
// API token) reach over the network: the server's certificate (the
// operator's, or a self-signed one it makes once and keeps in its data
// dir), its SHA-256 fingerprint, and the client side that pins that
// fingerprint or trusts a CA the operator gives.
package apitls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// fingerprintPrefix starts every fingerprint Fingerprint writes.
const fingerprintPrefix = "sha256:"

// Fingerprint is the SHA-256 of a certificate's DER bytes,
// "sha256:<64 lowercase hex digits>".
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return fingerprintPrefix + hex.EncodeToString(sum[:])
}

// ParseFingerprint reads a fingerprint as Fingerprint writes it, or as
// openssl prints it ("AB:CD:…"), with or without the "sha256:" prefix.
func ParseFingerprint(s string) ([]byte, error) {
	h := strings.TrimSpace(s)
	if len(h) >= len(fingerprintPrefix) && strings.EqualFold(h[:len(fingerprintPrefix)], fingerprintPrefix) {
		h = h[len(fingerprintPrefix):]
	}
	h = strings.ReplaceAll(h, ":", "")
	sum, err := hex.DecodeString(h)
	if err != nil || len(sum) != sha256.Size {
		return nil, errors.New("server fingerprint: want sha256: and 64 hex digits (as `cairn node token` prints it)")
	}
	return sum, nil
}

// Files of the self-signed certificate in the server's data dir.
const (
	selfSignedDir  = "tls"
	selfSignedCert = "api-cert.pem"
	selfSignedKey  = "api-key.pem"
	// SelfSignedValidity is how long a self-signed certificate is valid:
	// agents pin it, so it lasts until the operator replaces it.
	SelfSignedValidity = 10 * 365 * 24 * time.Hour
)

// ServerCertificate is the certificate the API is served with: the
// operator's (certFile and keyFile, PEM) when given, else the
// self-signed one kept under dataDir/tls, made on first use for hosts
// (names or IPs; "localhost", 127.0.0.1 and ::1 are always in it). It
// answers the certificate and its fingerprint.
func ServerCertificate(certFile, keyFile, dataDir string, hosts []string) (tls.Certificate, string, error) {
	if (certFile == "") != (keyFile == "") {
		return tls.Certificate{}, "", errors.New("CAIRN_API_TLS_CERT and CAIRN_API_TLS_KEY go together")
	}
	if certFile == "" {
		dir := filepath.Join(dataDir, selfSignedDir)
		certFile, keyFile = filepath.Join(dir, selfSignedCert), filepath.Join(dir, selfSignedKey)
		if _, err := os.Stat(certFile); errors.Is(err, os.ErrNotExist) {
			if err := writeSelfSigned(dir, certFile, keyFile, hosts); err != nil {
				return tls.Certificate{}, "", err
			}
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("API certificate %s: %w", certFile, err)
	}
	return cert, Fingerprint(cert.Certificate[0]), nil
}

// writeSelfSigned makes an ECDSA P-256 key and a self-signed certificate
// for hosts, and writes them (the key 0600) by renaming complete files
// into place, so a crash leaves either both or neither.
func writeSelfSigned(dir, certFile, keyFile string, hosts []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("API certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("API certificate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("API certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "cairn API", Organization: []string{"cairn (self-signed)"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(SelfSignedValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range hosts {
		if ip, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			if !ip.IsUnspecified() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip.AsSlice())
			}
		} else if h != "" && h != "localhost" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("API certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("API certificate key: %w", err)
	}
	if err := writeAtomic(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return writeAtomic(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ServerConfig serves cert, TLS 1.2 at least.
func ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// ClientOptions say how a client trusts the server's certificate.
type ClientOptions struct {
	// Fingerprint pins the server's certificate: the connection is made
	// only to a server presenting exactly that certificate, whatever its
	// names and issuer (a self-signed one).
	Fingerprint string
	// CAFile is a PEM file of the CAs that sign the server's
	// certificate, whose names must then match the URL's host; empty
	// means the system's roots.
	CAFile string
	// AllowPlainHTTP lets an http:// URL reach a host beyond loopback.
	AllowPlainHTTP bool
}

// ClientConfig checks the server URL against o and returns the TLS
// configuration for it (nil for an http:// URL to loopback, or beyond
// it when o.AllowPlainHTTP). Plain HTTP beyond loopback is refused: a
// node token, an API token and step data would travel in clear.
func ClientConfig(serverURL string, o ClientOptions) (*tls.Config, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http(s)://host[:port]", serverURL)
	}
	switch u.Scheme {
	case "http":
		if o.Fingerprint != "" || o.CAFile != "" {
			return nil, fmt.Errorf("server URL %s is plain HTTP but a server fingerprint or CA is set: use https://", serverURL)
		}
		if !IsLoopback(u.Hostname()) && !o.AllowPlainHTTP {
			return nil, fmt.Errorf("refusing plain HTTP to %s, beyond loopback: tokens and step data would travel in clear; use https:// (with CAIRN_SERVER_FINGERPRINT or CAIRN_SERVER_CA), or set CAIRN_INSECURE_HTTP=true on a network you trust", u.Host)
		}
		return nil, nil
	case "https":
	default:
		return nil, fmt.Errorf("server URL %q: want http(s)://host[:port]", serverURL)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("server CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("server CA %s: no PEM certificate in it", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	if o.Fingerprint != "" {
		want, err := ParseFingerprint(o.Fingerprint)
		if err != nil {
			return nil, err
		}
		// The pin replaces the chain and name checks: the certificate
		// must be the one pinned, byte for byte.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the server presented no certificate")
			}
			got := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if subtle.ConstantTimeCompare(got[:], want) != 1 {
				return fmt.Errorf("the server's certificate (%s) %w (CAIRN_SERVER_FINGERPRINT)", Fingerprint(cs.PeerCertificates[0].Raw), ErrNotPinned)
			}
			return nil
		}
	}
	return cfg, nil
}

// ErrNotPinned is the handshake's error when the server's certificate is
// not the pinned one.
var ErrNotPinned = errors.New("is not the pinned one")

// IsTrustError says whether err is a refusal of the server's certificate
// (not pinned, not signed by a trusted CA, not for the host): trying
// again gets the same answer, unlike a server that is away.
func IsTrustError(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.Is(err, ErrNotPinned) || errors.As(err, &verify) || errors.As(err, &unknown) ||
		errors.As(err, &host) || errors.As(err, &invalid)
}

// IsLoopback says whether host (a name or an IP, bracketed or not) is
// the loopback interface: "localhost" or a loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}
