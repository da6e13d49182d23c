package activities

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// indexEntry is one step of an execution's index (kind contract.DataIndex): what
// the stack record and the plan need of it, without its spec, in package
// order.
type indexEntry struct {
	ID           string      `json:"id"`
	Kind         string      `json:"k"`
	RecordKind   string      `json:"rk,omitempty"`
	Name         string      `json:"n"`
	Node         string      `json:"node,omitempty"`
	Associations []model.Ref `json:"a,omitempty"`
	Delete       bool        `json:"d,omitempty"`
	// Deps are the steps this one waits for (planner.Deps: dependsOn,
	// references and any-of members), for the execution's graph.
	Deps []string `json:"dep,omitempty"`
}

// beforeRecord is what a step persisted before changing anything (kind
// contract.DataBefore). The first record written for an execution and step is kept:
// a retry after a crash reads it back instead of the already-changed state.
//
// A before-state larger than the limit (Deps.BeforeStateLimit) is not
// kept: Before then holds only whether the object existed and its id, and
// Unkept the size of what was left out, so a rollback says it cannot
// restore the previous state instead of restoring something else.
type beforeRecord struct {
	Action       model.Action    `json:"action"`
	Irreversible bool            `json:"irreversible,omitempty"`
	Before       providers.State `json:"before"`
	Unkept       int             `json:"unkept,omitempty"`
}

// outputsRecord is what a step left once it converged (kind contract.DataOutputs):
// the object's id for the stack record, its outputs for dependents'
// expressions, and its result so a retried activity does not redo it.
type outputsRecord struct {
	ID      string         `json:"id,omitempty"`
	Outputs map[string]any `json:"outputs,omitempty"`
	Action  model.Action   `json:"action"`
	Outcome model.Outcome  `json:"outcome"`
	Deleted bool           `json:"deleted,omitempty"`
	// Refreshed marks a step that reacted to a refresh.
	Refreshed bool `json:"refreshed,omitempty"`
}

// depOutputs is what expressions see of a dependency: its outputs with its
// id.
func (o *outputsRecord) depOutputs() map[string]any {
	out := make(map[string]any, len(o.Outputs)+1)
	for k, v := range o.Outputs {
		out[k] = v
	}
	if _, ok := out["id"]; !ok && o.ID != "" {
		out["id"] = o.ID
	}
	return out
}

// PackageSnapshot is how a package's sources are kept as one snapshot: each
// document as it was given, with its name and format, so Prepare parses
// exactly what was validated.
type PackageSnapshot struct {
	Sources []SnapshotSource `json:"sources"`
}

// SnapshotSource is one source document of a package snapshot. Format is
// "yaml", "json" or "jsonnet".
type SnapshotSource struct {
	Name   string `json:"name"`
	Format string `json:"format"`
	Data   string `json:"data"`
}

// EncodePackageSnapshot is the snapshot content of sources, to store with
// store.PutSnapshot(ctx, "package", content).
func EncodePackageSnapshot(sources ...SnapshotSource) ([]byte, error) {
	return json.Marshal(PackageSnapshot{Sources: sources})
}

// DecodePackageSnapshot reads snapshot content. Content that is not an
// encoded PackageSnapshot is taken as one document, JSON when it starts
// like JSON and YAML otherwise.
func DecodePackageSnapshot(content []byte) (*PackageSnapshot, error) {
	trimmed := bytes.TrimSpace(content)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("empty package snapshot")
	}
	if trimmed[0] == '{' {
		var probe map[string]json.RawMessage
		if json.Unmarshal(trimmed, &probe) == nil {
			if raw, ok := probe["sources"]; ok && len(probe) == 1 {
				var snap PackageSnapshot
				if err := json.Unmarshal(raw, &snap.Sources); err != nil {
					return nil, fmt.Errorf("package snapshot: %w", err)
				}
				return &snap, nil
			}
		}
	}
	format := "yaml"
	if trimmed[0] == '{' || trimmed[0] == '[' {
		format = "json"
	}
	return &PackageSnapshot{Sources: []SnapshotSource{{Name: "package", Format: format, Data: string(content)}}}, nil
}

// RemoveStack removes a destroyed stack's record, the last step of
// DELETE /v1/stacks/{id}. A record that still lists resources (a delete
// failed or was skipped) is kept so the destroy can be sent again; a
// record already gone is fine, so a retried activity is harmless. The
// stack's drift schedule goes with it, its hooks with its secrets, and its
// drift record with its row.
func (a *Activities) RemoveStack(ctx context.Context, in contract.RemoveStackInput) (*contract.RemoveStackResult, error) {
	st, err := a.d.Store.GetStack(ctx, in.StackID)
	if notFound(err) {
		if err := a.deleteDriftSchedule(ctx, in.StackID); err != nil {
			return nil, err
		}
		return &contract.RemoveStackResult{Removed: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read stack %s: %w", in.StackID, err)
	}
	if n := len(st.Resources); n > 0 {
		a.log.Warn("destroy left resources; keeping the stack record", "stack", in.StackID, "resources", n)
		return &contract.RemoveStackResult{Remaining: n}, nil
	}
	if err := a.d.Store.DeleteStack(ctx, in.StackID); err != nil && !notFound(err) {
		return nil, fmt.Errorf("delete stack %s: %w", in.StackID, err)
	}
	if err := a.d.Store.DeleteStepData(ctx, contract.StackSecretsExecution(in.StackID)); err != nil && !notFound(err) {
		return nil, fmt.Errorf("delete the secrets of stack %s: %w", in.StackID, err)
	}
	if err := a.deleteDriftSchedule(ctx, in.StackID); err != nil {
		return nil, err
	}
	a.log.Info("stack removed after destroy", "stack", in.StackID)
	return &contract.RemoveStackResult{Removed: true}, nil
}

// intentKey is the key of one step's change in one execution, the same on
// every attempt (providers.Env.Intent): a digest, so neither id is handed
// to the systems a provider talks to.
func intentKey(execID, stepID string) string {
	sum := sha256.Sum256([]byte("cairn intent\x00" + execID + "\x00" + stepID))
	return hex.EncodeToString(sum[:16])
}
