package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// PutDeploymentData keeps a node's deployment data as execution execID
// saw it (an idempotent upsert). The cluster must exist (ErrNotFound).
func (s *sqlStore) PutDeploymentData(ctx context.Context, clusterID, nodeID, execID string, data []byte) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, "clusters", clusterID); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("cluster %q: %w", clusterID, ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO deployment_data (cluster_id, node_id, execution_id, data)
			VALUES ($1, $2, $3, $4)
			ON CONFLICT (cluster_id, node_id, execution_id) DO UPDATE SET data = excluded.data`,
			clusterID, nodeID, execID, data)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return err
		}
		return fmt.Errorf("deployment data of node %q of cluster %q (execution %s): %w", nodeID, clusterID, execID, err)
	}
	return nil
}

// GetDeploymentData reads what PutDeploymentData kept (ErrNotFound when
// nothing is).
func (s *sqlStore) GetDeploymentData(ctx context.Context, clusterID, nodeID, execID string) ([]byte, error) {
	var data []byte
	err := s.r.QueryRowContext(ctx, `SELECT data FROM deployment_data
		WHERE cluster_id = $1 AND node_id = $2 AND execution_id = $3`, clusterID, nodeID, execID).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("deployment data of node %q of cluster %q (execution %s): %w", nodeID, clusterID, execID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("deployment data of node %q of cluster %q (execution %s): %w", nodeID, clusterID, execID, err)
	}
	return data, nil
}

// PruneDeploymentData drops a cluster's deployment data that no task run
// refers to any more, except that of execution keep (one being recorded):
// a node's row when no run of a task on that node in that execution is
// recorded, an execution's common part (node "") when no run of that
// execution is. It returns how many rows it dropped.
func (s *sqlStore) PruneDeploymentData(ctx context.Context, clusterID, keep string) (int, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM deployment_data
		WHERE cluster_id = $1 AND execution_id <> $2 AND NOT EXISTS (
			SELECT 1 FROM task_runs r WHERE r.cluster_id = deployment_data.cluster_id
				AND (r.node_id = deployment_data.node_id OR deployment_data.node_id = '')
				AND r.execution_id = deployment_data.execution_id)`,
		clusterID, keep)
	if err != nil {
		return 0, fmt.Errorf("prune deployment data of cluster %q: %w", clusterID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("prune deployment data of cluster %q: %w", clusterID, err)
	}
	return int(n), nil
}
