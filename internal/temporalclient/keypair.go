package temporalclient

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// keyPair is a client certificate read from its files and read again when
// either file changes on disk (size or modification time, through
// symlinks, as a mounted secret is swapped), checked at each TLS handshake.
// A pair that fails to load during a rotation (the certificate written, the
// key not yet) keeps the previous one in use and is tried again at the next
// handshake.
type keyPair struct {
	certFile, keyFile string
	log               *slog.Logger

	mu       sync.Mutex
	cert     *tls.Certificate
	certSeen stamp
	keySeen  stamp
}

// stamp identifies one version of a file.
type stamp struct {
	size int64
	mod  time.Time
}

func stampOf(name string) (stamp, error) {
	st, err := os.Stat(name)
	if err != nil {
		return stamp{}, err
	}
	return stamp{size: st.Size(), mod: st.ModTime()}, nil
}

// load reads the pair, failing with the setting named.
func (k *keyPair) load() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.reload()
}

// reload reads both files; k.mu is held.
func (k *keyPair) reload() error {
	cs, err := stampOf(k.certFile)
	if err != nil {
		return fmt.Errorf("CAIRN_TEMPORAL_TLS_CERT: %w", err)
	}
	ks, err := stampOf(k.keyFile)
	if err != nil {
		return fmt.Errorf("CAIRN_TEMPORAL_TLS_KEY: %w", err)
	}
	certPEM, err := readBounded(k.certFile)
	if err != nil {
		return fmt.Errorf("CAIRN_TEMPORAL_TLS_CERT: %w", err)
	}
	keyPEM, err := readBounded(k.keyFile)
	if err != nil {
		return fmt.Errorf("CAIRN_TEMPORAL_TLS_KEY: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("CAIRN_TEMPORAL_TLS_CERT and CAIRN_TEMPORAL_TLS_KEY (%s, %s): %w", k.certFile, k.keyFile, err)
	}
	if now := time.Now(); cert.Leaf != nil && now.After(cert.Leaf.NotAfter) {
		k.log.Warn("the Temporal client certificate has expired", "file", k.certFile, "notAfter", cert.Leaf.NotAfter)
	}
	k.cert, k.certSeen, k.keySeen = &cert, cs, ks
	return nil
}

// get is tls.Config.GetClientCertificate: the current pair, re-read first
// if its files changed.
func (k *keyPair) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	cs, cerr := stampOf(k.certFile)
	ks, kerr := stampOf(k.keyFile)
	if cerr == nil && kerr == nil && (cs != k.certSeen || ks != k.keySeen) {
		if err := k.reload(); err != nil {
			k.log.Warn("the Temporal client certificate changed on disk but does not load; the previous one stays in use", "error", err)
		} else {
			k.log.Info("the Temporal client certificate was re-read", "file", k.certFile)
		}
	}
	return k.cert, nil
}
