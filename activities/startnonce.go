package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/store"
)

// ConsumeStart consumes the start's one-time nonce for in.Run: it fails,
// not to be retried (StartNotIssuedType), when the nonce is unknown or
// another run consumed it. A retry after a consume that succeeded passes.
// Cost: one row update.
func (a *Activities) ConsumeStart(ctx context.Context, in contract.ConsumeStartInput) error {
	if in.Nonce == "" {
		return notIssued()
	}
	err := a.d.Store.ConsumeStartNonce(ctx, in.Nonce, in.Run)
	if errors.Is(err, store.ErrNonceUsed) {
		return notIssued()
	}
	return err
}

func notIssued() error {
	return temporal.NewNonRetryableApplicationError(store.ErrNonceUsed.Error(), contract.StartNotIssuedType, nil)
}
