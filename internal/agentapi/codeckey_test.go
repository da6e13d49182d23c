package agentapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckCodecKey(t *testing.T) {
	for _, tc := range []struct {
		name, server, agent, want string
	}{
		{"neither has a key", "", "", ""},
		{"the same key", "a1b2c3d4e5f6", "a1b2c3d4e5f6", ""},
		{"only the server", "a1b2c3d4e5f6", "", "the server seals payloads with a codec key (id a1b2c3d4e5f6) and this agent has none"},
		{"only the agent", "", "a1b2c3d4e5f6", "this agent has a codec key (id a1b2c3d4e5f6) and the server has none"},
		{"another key", "a1b2c3d4e5f6", "0f0f0f0f0f0f", "this agent's codec key (id 0f0f0f0f0f0f) is not the server's (id a1b2c3d4e5f6)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&NodeInfo{CodecKeyID: tc.server}).CheckCodecKey(tc.agent)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
