package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestApprovalPoliciesGoWithTheirStackOrCluster(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		st := &model.Stack{Name: "web"}
		require.NoError(t, s.CreateStack(ctx, st))
		require.NoError(t, s.PutCluster(ctx, &model.Cluster{ID: "prod"}))
		for _, tc := range []struct {
			target model.ScopeKind
			id     string
			remove func() error
		}{
			{model.ScopeStack, st.ID, func() error { return s.DeleteStack(ctx, st.ID) }},
			{model.ScopeCluster, "prod", func() error { return s.DeleteCluster(ctx, "prod") }},
		} {
			t.Run(string(tc.target), func(t *testing.T) {
				_, err := s.ApprovalPolicy(ctx, tc.target, tc.id)
				require.ErrorIs(t, err, ErrNotFound)
				require.ErrorIs(t, s.PutApprovalPolicy(ctx, tc.target, "nope", model.ApprovalPolicy{Required: 1}), ErrNotFound)
				require.NoError(t, s.PutApprovalPolicy(ctx, tc.target, tc.id, model.ApprovalPolicy{Required: 2}))
				require.NoError(t, s.PutApprovalPolicy(ctx, tc.target, tc.id, model.ApprovalPolicy{Required: 3, AuthorMayApprove: true}))
				got, err := s.ApprovalPolicy(ctx, tc.target, tc.id)
				require.NoError(t, err)
				assert.Equal(t, model.ApprovalPolicy{Required: 3, AuthorMayApprove: true}, *got)
				require.NoError(t, s.DeleteApprovalPolicy(ctx, tc.target, tc.id))
				require.ErrorIs(t, s.DeleteApprovalPolicy(ctx, tc.target, tc.id), ErrNotFound)
				require.NoError(t, s.PutApprovalPolicy(ctx, tc.target, tc.id, model.ApprovalPolicy{Required: 1}))
				require.NoError(t, tc.remove())
				_, err = s.ApprovalPolicy(ctx, tc.target, tc.id)
				assert.ErrorIs(t, err, ErrNotFound, "the policy outlived its owner")
			})
		}
		require.Error(t, s.PutApprovalPolicy(ctx, "release", "x", model.ApprovalPolicy{Required: 1}))
	})
}

func TestStartNoncesAreConsumedOnceByOneRun(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		require.NoError(t, s.PutStartNonce(ctx, "n1", "stack-a"))
		require.Error(t, s.PutStartNonce(ctx, "n1", "stack-b"), "a nonce is recorded once")
		for _, tc := range []struct {
			name, nonce, execution, run string
			want                        error
		}{
			{"under another workflow id", "n1", "stack-b", "run-9", ErrNonceUsed},
			{"first consume", "n1", "stack-a", "run-1", nil},
			{"retry by the same run", "n1", "stack-a", "run-1", nil},
			{"another run", "n1", "stack-a", "run-2", ErrNonceUsed},
			{"another run under another id", "n1", "stack-b", "run-1", ErrNonceUsed},
			{"unknown nonce", "n2", "stack-a", "run-1", ErrNonceUsed},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := s.ConsumeStartNonce(ctx, tc.nonce, tc.execution, tc.run)
				if tc.want == nil {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, tc.want)
				}
			})
		}
		n, err := s.PruneStartNonces(ctx, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		assert.Zero(t, n, "a fresh nonce was pruned")
		require.NoError(t, s.PutStartNonce(ctx, "n3", "stack-c"))
		n, err = s.PruneStartNonces(ctx, time.Now().Add(time.Minute))
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		require.ErrorIs(t, s.ConsumeStartNonce(ctx, "n3", "stack-c", "run-3"), ErrNonceUsed, "a pruned nonce is no longer issued")
	})
}

// TestStartNoncesSinceTellsAFreshStore: a store made at this release
// (every migration in one run) is fresh, no start without a nonce can come
// from an earlier release; one whose first migration was applied long
// before the nonces' is not.
func TestStartNoncesSinceTellsAFreshStore(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		since, fresh, err := s.StartNoncesSince(ctx)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now(), since, time.Hour, "the nonces' migration was applied by this test run")
		assert.True(t, fresh, "a store made by this release")

		upgraded := freshStore(t, be)
		_, err = upgraded.(*sqlStore).w.ExecContext(ctx, `UPDATE schema_migrations SET applied_at = $1 WHERE version = 1`,
			time.Now().Add(-30*24*time.Hour).UTC().Format(sqliteTimeLayout))
		require.NoError(t, err)
		since2, fresh, err := upgraded.StartNoncesSince(ctx)
		require.NoError(t, err)
		assert.False(t, fresh, "a store an earlier release made")
		assert.WithinDuration(t, time.Now(), since2, time.Hour)
	})
}

// BenchmarkStartNonce is what binding a start to a nonce costs the store:
// the starter's write and the workflow's consume, per start.
func BenchmarkStartNonce(b *testing.B) {
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			s := freshStore(b, be)
			b.ResetTimer()
			for i := range b.N {
				n := fmt.Sprintf("nonce-%d", i)
				if err := s.PutStartNonce(ctx, n, "stack-x"); err != nil {
					b.Fatal(err)
				}
				if err := s.ConsumeStartNonce(ctx, n, "stack-x", "run"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestActNoncesVouchForTheirPrincipal: an approval's nonce is consumed
// once, for the execution and act it was issued for, and answers with the
// principal recorded with it; it is never taken as a start nonce, nor a
// start nonce as an act's.
func TestActNoncesVouchForTheirPrincipal(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		require.NoError(t, s.PutActNonce(ctx, "a1", "dryrun-1", "approve", "bob"))
		require.NoError(t, s.PutStartNonce(ctx, "s1", "dryrun-1"))
		require.Error(t, s.PutActNonce(ctx, "a2", "dryrun-1", "", "bob"), "an act nonce names its act")
		require.ErrorIs(t, s.ConsumeStartNonce(ctx, "a1", "dryrun-1", "run-1"), ErrNonceUsed, "an approval's nonce started a run")
		for _, tc := range []struct {
			name, nonce, execution, act, run string
			want                             error
		}{
			{"another execution", "a1", "dryrun-2", "approve", "run-1", ErrNonceUsed},
			{"another act", "a1", "dryrun-1", "reject", "run-1", ErrNonceUsed},
			{"a start nonce", "s1", "dryrun-1", "approve", "run-1", ErrNonceUsed},
			{"the one it was issued for", "a1", "dryrun-1", "approve", "run-1", nil},
			{"a retry by the same run", "a1", "dryrun-1", "approve", "run-1", nil},
			{"another run", "a1", "dryrun-1", "approve", "run-2", ErrNonceUsed},
		} {
			t.Run(tc.name, func(t *testing.T) {
				by, err := s.ConsumeActNonce(ctx, tc.nonce, tc.execution, tc.act, tc.run)
				if tc.want != nil {
					require.ErrorIs(t, err, tc.want)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, "bob", by)
			})
		}
		require.NoError(t, s.ConsumeStartNonce(ctx, "s1", "dryrun-1", "run-1"), "the start nonce is still its own")
	})
}
