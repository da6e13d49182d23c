package contract_test

import (
	"encoding/json"
	"slices"
	"testing"

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
	if len(r.Steps) != 2 || len(r.Groups) != 2 || !slices.Equal(r.Groups[0].IDs, []string{"file/a", "file/c"}) {
		t.Fatalf("compacted %+v", r)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back contract.UnitResult
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	back.Expand()
	if len(back.Steps) != len(steps) || back.Groups != nil {
		t.Fatalf("expanded %+v", back)
	}
	byID := map[string]contract.StepResult{}
	for _, s := range back.Steps {
		byID[s.StepID] = s
	}
	for _, want := range steps {
		got := byID[want.StepID]
		if got.Action != want.Action || got.Outcome != want.Outcome || got.Error != want.Error || len(got.Changes) != len(want.Changes) {
			t.Fatalf("%s: got %+v, want %+v", want.StepID, got, want)
		}
	}
}
