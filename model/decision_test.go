package model

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecisionRequestCheckTarget(t *testing.T) {
	for body, want := range map[string]string{
		`{"action":"retry"}`:                          "",
		`{"action":"retry","step":"a"}`:               "",
		`{"action":"retry","steps":["a","b"]}`:        "",
		`{"action":"retry","all":true}`:               "",
		`{"action":"retry","step":"a","all":true}`:    "step: give one of step, steps or all",
		`{"action":"retry","step":"a","steps":["b"]}`: "step: give one of step, steps or all",
		`{"action":"retry","steps":["a"],"all":true}`: "steps: give one of step, steps or all",
		`{"action":"retry","steps":[]}`:               "steps: lists no step",
		`{"action":"retry","steps":["a",""]}`:         "steps[1]: is empty",
		`{"action":"retry","steps":["a","b","a"]}`:    `steps[2]: repeats "a"`,
	} {
		var r DecisionRequest
		require.NoError(t, json.Unmarshal([]byte(body), &r))
		err := r.CheckTarget()
		if want == "" {
			assert.NoError(t, err, body)
			continue
		}
		var fe *DecisionFieldError
		require.ErrorAs(t, err, &fe, body)
		assert.EqualError(t, err, want, body)
	}
}
