package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

const (
	stackInsertColumns = `id, name, description, urls, resources, snapshot_hash, created_at, updated_at`
	stackColumns       = stackInsertColumns + `, last_exec_id, cluster_id`
)

func (s *sqlStore) CreateStack(ctx context.Context, st *model.Stack) error {
	if st.ID == "" {
		st.ID = newID()
	}
	urls, err := json.Marshal(st.URLs)
	if err != nil {
		return fmt.Errorf("create stack %q: urls: %w", st.ID, err)
	}
	resources, err := json.Marshal(st.Resources)
	if err != nil {
		return fmt.Errorf("create stack %q: resources: %w", st.ID, err)
	}
	at := now()
	n, err := execCount(ctx, s.w, `INSERT INTO stacks (`+stackInsertColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (id) DO NOTHING`,
		st.ID, st.Name, st.Description, string(urls), string(resources), st.SnapshotHash, s.d.timeArg(at))
	if err != nil {
		return fmt.Errorf("create stack %q: %w", st.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("stack %q already exists: %w", st.ID, ErrConflict)
	}
	st.CreatedAt, st.UpdatedAt = at, at
	return nil
}

func (s *sqlStore) GetStack(ctx context.Context, id string) (*model.Stack, error) {
	return getStack(ctx, s.r, id)
}

func getStack(ctx context.Context, q queryer, id string) (*model.Stack, error) {
	return getOne(ctx, q, scanStack, fmt.Sprintf("stack %q", id), `SELECT `+stackColumns+` FROM stacks WHERE id = $1`, id)
}

func (s *sqlStore) ListStacks(ctx context.Context) ([]*model.Stack, error) {
	out, err := queryAll(ctx, s.r, scanStack, `SELECT `+stackColumns+` FROM stacks ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list stacks: %w", err)
	}
	return out, nil
}

func (s *sqlStore) StacksNamed(ctx context.Context, name string) ([]*model.Stack, error) {
	out, err := queryAll(ctx, s.r, scanStack, `SELECT `+stackColumns+` FROM stacks WHERE name = $1 ORDER BY created_at, id`, name)
	if err != nil {
		return nil, fmt.Errorf("list stacks named %q: %w", name, err)
	}
	return out, nil
}

func (s *sqlStore) DeleteStack(ctx context.Context, id string) error {
	n, err := execCount(ctx, s.w, `DELETE FROM stacks WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete stack %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("stack %q: %w", id, ErrNotFound)
	}
	return nil
}

func (s *sqlStore) WriteStackRecord(ctx context.Context, stackID, execID string, resources []model.StackResource, snapshotHash, clusterID string, changed bool) (*model.Stack, error) {
	if execID == "" {
		return nil, fmt.Errorf("write stack %q record: empty execution id", stackID)
	}
	encoded, err := json.Marshal(resources)
	if err != nil {
		return nil, fmt.Errorf("write stack %q record: resources: %w", stackID, err)
	}
	var out *model.Stack
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, "stacks", stackID); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("stack %q: %w", stackID, ErrNotFound)
		}
		at := now()
		// The execution's mark goes in first: if it is already there this
		// is a retry of a write that happened, and nothing changes.
		n, err := execCount(ctx, tx, `INSERT INTO stack_executions (stack_id, exec_id, applied_at)
			VALUES ($1, $2, $3) ON CONFLICT (stack_id, exec_id) DO NOTHING`,
			stackID, execID, s.d.timeArg(at))
		if err != nil {
			return err
		}
		if n == 1 {
			q := `UPDATE stacks SET resources = $2, snapshot_hash = $3, last_exec_id = $4, cluster_id = $5 WHERE id = $1`
			args := []any{stackID, string(encoded), snapshotHash, execID, clusterID}
			if changed {
				q = `UPDATE stacks SET resources = $2, snapshot_hash = $3, last_exec_id = $4, cluster_id = $5, updated_at = $6 WHERE id = $1`
				args = append(args, s.d.timeArg(at))
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		out, err = getStack(ctx, tx, stackID)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("write stack %q record of %s: %w", stackID, execID, err)
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanStack(row scanner) (*model.Stack, error) {
	var st model.Stack
	var urls, resources string
	if err := row.Scan(&st.ID, &st.Name, &st.Description, &urls, &resources, &st.SnapshotHash,
		timeCol{&st.CreatedAt}, timeCol{&st.UpdatedAt}, &st.LastExecutionID, &st.ClusterID); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(urls), &st.URLs); err != nil {
		return nil, fmt.Errorf("stack %q: urls: %w", st.ID, err)
	}
	if err := json.Unmarshal([]byte(resources), &st.Resources); err != nil {
		return nil, fmt.Errorf("stack %q: resources: %w", st.ID, err)
	}
	return &st, nil
}
