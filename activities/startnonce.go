package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"

	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/store"
)

// ConsumeStart consumes the start's one-time nonce for the workflow run
// that asks (Temporal names it, not the input): it fails, not to be
// retried (StartNotIssuedType), when the nonce is unknown, was issued for
// another workflow id, or another run consumed it. A retry after a
// consume that succeeded passes. Cost: one row update.
func (a *Activities) ConsumeStart(ctx context.Context, in contract.ConsumeStartInput) error {
	if in.Nonce == "" {
		return a.startWithoutNonce(ctx)
	}
	wf := activity.GetInfo(ctx).WorkflowExecution
	err := a.d.Store.ConsumeStartNonce(ctx, in.Nonce, wf.ID, wf.RunID)
	if errors.Is(err, store.ErrNonceUsed) {
		return notIssued()
	}
	return err
}

// ConsumeAct consumes the nonce of an operator's act on the workflow that
// asks (Temporal names it and its run) for the Update in.Update, and
// returns the principal recorded with it; it fails, not to be retried
// (ActNotIssuedType), when the nonce is unknown, was issued for another
// execution or act, or another run or Update used it. Cost: one row
// update.
func (a *Activities) ConsumeAct(ctx context.Context, in contract.ConsumeActInput) (contract.ConsumeActResult, error) {
	wf := activity.GetInfo(ctx).WorkflowExecution
	by, err := a.d.Store.ConsumeActNonce(ctx, in.Nonce, wf.ID, in.Act, wf.RunID+"/"+in.Update)
	if errors.Is(err, store.ErrNonceUsed) {
		return contract.ConsumeActResult{}, temporal.NewNonRetryableApplicationError(
			in.Act+" not issued by this Cairn or already used", contract.ActNotIssuedType, nil)
	}
	if err != nil {
		return contract.ConsumeActResult{}, err
	}
	return contract.ConsumeActResult{By: by}, nil
}

// nonceUpgradeWindow is how long after a store began recording start
// nonces a start without one is still taken: one made by a server of an
// earlier release during a rolling upgrade (its workflow first picked up
// by a worker of this one). After it, such a start can only be a copy of
// an old input, and is refused; so is every one on a store that no
// earlier release ever used.
const nonceUpgradeWindow = 24 * time.Hour

// startWithoutNonce takes a start that carries no nonce within
// nonceUpgradeWindow of the store's first nonce, on a store that earlier
// releases used, and refuses it otherwise. One read, the first time.
func (a *Activities) startWithoutNonce(ctx context.Context) error {
	since, fresh, err := a.d.Store.StartNoncesSince(ctx)
	if err != nil {
		return err
	}
	if fresh || !inUpgradeWindow(since, time.Now()) {
		return notIssued()
	}
	activity.GetLogger(ctx).Warn("a start without a nonce, from a server of an earlier release, taken during the upgrade window",
		"until", since.Add(nonceUpgradeWindow))
	return nil
}

// inUpgradeWindow says whether now is within nonceUpgradeWindow of since.
func inUpgradeWindow(since, now time.Time) bool {
	return !now.Before(since) && now.Before(since.Add(nonceUpgradeWindow))
}

func notIssued() error {
	return temporal.NewNonRetryableApplicationError(store.ErrNonceUsed.Error(), contract.StartNotIssuedType, nil)
}
