package providers

import (
	"context"
	"time"
)

type killByKey struct{}

// WithKillBy tells the commands run under ctx when they must be gone at
// the latest once ctx ends: a command stopped by its context's end gets
// SIGTERM, and SIGKILL after its grace or at by(), whichever comes first.
// by (nil: no bound) is read when the command is stopped, so it may move
// while the command runs. The activities pass how long their attempt is
// still theirs (liveness.OwnedUntil): a command must not outlive it, or
// the attempt Temporal starts next would run beside it.
func WithKillBy(ctx context.Context, by func() time.Time) context.Context {
	if by == nil {
		return ctx
	}
	return context.WithValue(ctx, killByKey{}, by)
}

// killGraceFor bounds grace by ctx's WithKillBy.
func killGraceFor(ctx context.Context, grace time.Duration) time.Duration {
	by, ok := ctx.Value(killByKey{}).(func() time.Time)
	if !ok {
		return grace
	}
	return max(0, min(grace, time.Until(by())))
}
