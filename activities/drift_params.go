package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// ParamsGone starts the error of a drift check whose package needs
// parameters the store no longer keeps.
const ParamsGone = "the parameters of the last apply are gone"

// driftParams returns the parameters a drift check runs the stack's
// package with: those of the execution that last wrote the stack's record
// (its apply), copied under a parameters name derived from the check, which
// the dry-run and a repair claim like any execution's (see claimParams).
// When that execution's parameters are no longer kept (retention removed
// them, or it was given none) the stack's kept secrets stand in; if the
// package then refers to an env or secret that has no value here, problem
// says so and no name is returned: planning with values missing would
// report drift that is not there. One to three reads, one write when there
// are parameters.
func (a *Activities) driftParams(ctx context.Context, in contract.LoadDriftTargetInput, snapshotHash string) (ref, problem string, err error) {
	p, found, err := a.lastApplyParams(ctx, in.StackID)
	if err != nil {
		return "", "", err
	}
	pkg, err := a.snapshots.Load(ctx, snapshotHash, nil)
	if err != nil {
		return "", "", packageFailure(err)
	}
	env, secret := a.lookups(p)
	if missing := prepare.UnresolvedRefs(pkg.Package, env, secret); len(missing) > 0 {
		if found {
			return "", "the package needs parameters the last apply was not given: " + strings.Join(missing, ", ") + " have no value here", nil
		}
		return "", ParamsGone + " (or it was given none): " + strings.Join(missing, ", ") + " have no value here; apply again with them", nil
	}
	if p.Empty() {
		return "", "", nil
	}
	data, err := json.Marshal(p)
	if err != nil {
		return "", "", fmt.Errorf("encode parameters: %w", err)
	}
	sum := sha256.Sum256([]byte("drift\x00" + in.ExecutionID))
	ref = hex.EncodeToString(sum[:16])
	if err := a.d.Store.PutStepData(ctx, contract.ParamsExecution(ref), contract.ParamsKey, contract.DataParams, data); err != nil {
		return "", "", fmt.Errorf("keep the check's parameters: %w", err)
	}
	return ref, "", nil
}

// lastApplyParams reads the parameters of the execution that last wrote
// the stack's record; found is false when they are not kept, and then the
// stack's kept secrets are returned.
func (a *Activities) lastApplyParams(ctx context.Context, stackID string) (p model.ApplyParams, found bool, err error) {
	execID, err := a.d.Store.StackLastExecution(ctx, stackID)
	if err != nil {
		return p, false, err
	}
	if execID != "" {
		data, err := a.d.Store.GetStepData(ctx, execID, contract.ParamsKey, contract.DataParams)
		switch {
		case err == nil:
			if err := json.Unmarshal(data, &p); err != nil {
				// The record may hold secrets: say nothing of its bytes.
				return p, false, fmt.Errorf("parameters of %s do not decode", execID)
			}
			return p, true, nil
		case !errors.Is(err, store.ErrNotFound):
			return p, false, fmt.Errorf("read parameters: %w", err)
		}
	}
	data, err := a.d.Store.GetStepData(ctx, contract.StackSecretsExecution(stackID), contract.ParamsKey, contract.DataParams)
	if errors.Is(err, store.ErrNotFound) {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("read the stack's secrets: %w", err)
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, false, fmt.Errorf("the secrets of stack %s do not decode", stackID)
	}
	return p, false, nil
}
