package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// RecordTaskRun upserts the node's last successful run of the task. A run
// older than the one recorded (a late retry) does not replace it. The
// cluster must exist (ErrNotFound); At defaults to now.
func (s *sqlStore) RecordTaskRun(ctx context.Context, run model.TaskRun) error {
	at := now()
	if !run.At.IsZero() {
		at = normTime(run.At)
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, "clusters", run.ClusterID); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("cluster %q: %w", run.ClusterID, ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO task_runs (cluster_id, node_id, task_id, execution_id, digest, at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (cluster_id, node_id, task_id) DO UPDATE SET execution_id = excluded.execution_id,
				digest = excluded.digest, at = excluded.at
			WHERE task_runs.at <= excluded.at`,
			run.ClusterID, run.NodeID, run.TaskID, run.ExecutionID, run.Digest, s.d.timeArg(at))
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return err
		}
		return fmt.Errorf("record run of task %q on node %q of cluster %q: %w", run.TaskID, run.NodeID, run.ClusterID, err)
	}
	return nil
}

func (s *sqlStore) LastTaskRun(ctx context.Context, clusterID, nodeID, taskID string) (*model.TaskRun, error) {
	run := model.TaskRun{ClusterID: clusterID, NodeID: nodeID, TaskID: taskID}
	err := s.r.QueryRowContext(ctx, `SELECT execution_id, digest, at FROM task_runs
		WHERE cluster_id = $1 AND node_id = $2 AND task_id = $3`, clusterID, nodeID, taskID).
		Scan(&run.ExecutionID, &run.Digest, timeCol{&run.At})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run of task %q on node %q of cluster %q: %w", taskID, nodeID, clusterID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("last run of task %q on node %q of cluster %q: %w", taskID, nodeID, clusterID, err)
	}
	return &run, nil
}
