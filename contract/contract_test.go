package contract_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

func TestUnitResultCompactsPlainResults(t *testing.T) {
	steps := []contract.StepResult{
		{StepID: "file/a", Action: model.ActionCreate, Outcome: model.OutcomeCreated},
		{StepID: "file/b", Action: model.ActionNoop, Outcome: model.OutcomeUnchanged},
		{StepID: "file/c", Action: model.ActionCreate, Outcome: model.OutcomeCreated},
		{StepID: "file/d", Outcome: model.OutcomeFailed, Error: "boom"},
		{StepID: "file/e", Action: model.ActionUpdate, Outcome: model.OutcomeUpdated, Changes: []model.AttrChange{{Path: "mode", Old: "0600", New: "0644"}}},
	}
	r := contract.UnitResult{Steps: slices.Clone(steps)}
	r.Compact()
	require.Len(t, r.Steps, 2, "compacted %+v", r)
	require.Len(t, r.Groups, 2, "compacted %+v", r)
	require.True(t, slices.Equal(r.Groups[0].IDs, []string{"file/a", "file/c"}), "compacted %+v", r)
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	var back contract.UnitResult
	require.NoError(t, json.Unmarshal(raw, &back))
	back.Expand()
	require.Len(t, back.Steps, len(steps), "expanded %+v", back)
	require.Nil(t, back.Groups, "expanded %+v", back)
	byID := map[string]contract.StepResult{}
	for _, s := range back.Steps {
		byID[s.StepID] = s
	}
	for _, want := range steps {
		got := byID[want.StepID]
		require.Equal(t, want.Action, got.Action, "%s: got %+v, want %+v", want.StepID, got, want)
		require.Equal(t, want.Outcome, got.Outcome, "%s: got %+v, want %+v", want.StepID, got, want)
		require.Equal(t, want.Error, got.Error, "%s: got %+v, want %+v", want.StepID, got, want)
		require.Len(t, got.Changes, len(want.Changes), "%s: got %+v, want %+v", want.StepID, got, want)
	}
}
