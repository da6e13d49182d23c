package providers

import (
	"crypto/rand"
	"encoding/hex"
)

// Host is the worker serving a node, as a reboot step sees it.
type Host struct {
	// Boot identifies this run of the node's worker: it changes whenever
	// the worker restarts (an agent restarts when its host reboots), so a
	// step that finds another boot than the one it recorded knows the
	// node went down and came back.
	Boot string
	// Restart, when set, restarts the node's worker instead of rebooting
	// the host: the simulated reboot of the local development cluster. It
	// must return at once and restart asynchronously (the step calling it
	// runs on the worker it restarts).
	Restart func()
}

// NewHost returns a Host with a fresh random boot id.
func NewHost(restart func()) *Host {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return &Host{Boot: hex.EncodeToString(b[:]), Restart: restart}
}
