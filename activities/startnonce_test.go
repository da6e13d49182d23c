package activities

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestStartWithoutNonceOnlyDuringTheUpgradeWindow: a start carrying no
// nonce (made by a server of an earlier release) is taken only within a
// day of the store's first nonce; before that moment or after the day it
// can only be a copy, and is refused.
func TestStartWithoutNonceOnlyDuringTheUpgradeWindow(t *testing.T) {
	since := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		now  time.Time
		want bool
	}{
		{"the moment nonces began", since, true},
		{"an hour into the upgrade", since.Add(time.Hour), true},
		{"just before the day ends", since.Add(nonceUpgradeWindow - time.Second), true},
		{"a day later", since.Add(nonceUpgradeWindow), false},
		{"a week later", since.Add(7 * 24 * time.Hour), false},
		{"before nonces began (a clock behind)", since.Add(-time.Minute), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, inUpgradeWindow(since, tt.now))
		})
	}
}
