package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// approvalTable is the table and key column of the approval policies of a
// kind of scope (stacks and clusters have them), and the table its ids
// live in.
func approvalTable(t model.ScopeKind) (table, key, owners string, err error) {
	switch t {
	case model.ScopeStack:
		return "stack_approvals", "stack_id", "stacks", nil
	case model.ScopeCluster:
		return "cluster_approvals", "cluster_id", "clusters", nil
	}
	return "", "", "", fmt.Errorf("approval target %q: want stack or cluster", t)
}

// PutApprovalPolicy sets the four-eyes policy of a stack or cluster
// (ErrNotFound without it). One write.
func (s *sqlStore) PutApprovalPolicy(ctx context.Context, t model.ScopeKind, id string, p model.ApprovalPolicy) error {
	table, key, owners, err := approvalTable(t)
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, owners, id); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("%s %q: %w", t, id, ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (`+key+`, required, author_may_approve, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (`+key+`) DO UPDATE SET required = excluded.required, author_may_approve = excluded.author_may_approve, updated_at = excluded.updated_at`,
			id, p.Required, boolInt(p.AuthorMayApprove), s.d.timeArg(now()))
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("put approvals of %s %q: %w", t, id, err)
	}
	return err
}

// ApprovalPolicy returns the four-eyes policy of a stack or cluster
// (ErrNotFound when it has none). One read.
func (s *sqlStore) ApprovalPolicy(ctx context.Context, t model.ScopeKind, id string) (*model.ApprovalPolicy, error) {
	table, key, _, err := approvalTable(t)
	if err != nil {
		return nil, err
	}
	var required, author int
	err = s.r.QueryRowContext(ctx, `SELECT required, author_may_approve FROM `+table+` WHERE `+key+` = $1`, id).Scan(&required, &author)
	if err != nil {
		return nil, rowError(fmt.Sprintf("approvals of %s %q", t, id), err)
	}
	return &model.ApprovalPolicy{Required: required, AuthorMayApprove: author != 0}, nil
}

// DeleteApprovalPolicy drops the policy of a stack or cluster
// (ErrNotFound when it has none). One write.
func (s *sqlStore) DeleteApprovalPolicy(ctx context.Context, t model.ScopeKind, id string) error {
	table, key, _, err := approvalTable(t)
	if err != nil {
		return err
	}
	n, err := execCount(ctx, s.w, `DELETE FROM `+table+` WHERE `+key+` = $1`, id)
	if err != nil {
		return fmt.Errorf("delete approvals of %s %q: %w", t, id, err)
	}
	if n == 0 {
		return fmt.Errorf("approvals of %s %q: %w", t, id, ErrNotFound)
	}
	return nil
}
