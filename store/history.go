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
	return s.RecordTaskRuns(ctx, run.ClusterID, []model.TaskRun{run})
}

// RecordTaskRuns records runs of one cluster's tasks as RecordTaskRun does,
// in one transaction: an execution on 1,000 nodes records some 40,000, one
// commit (one fsync) instead of one each.
func (s *sqlStore) RecordTaskRuns(ctx context.Context, clusterID string, runs []model.TaskRun) error {
	if len(runs) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, "clusters", clusterID); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("cluster %q: %w", clusterID, ErrNotFound)
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO task_runs (cluster_id, node_id, task_id, execution_id, digest, at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (cluster_id, node_id, task_id) DO UPDATE SET execution_id = excluded.execution_id,
				digest = excluded.digest, at = excluded.at
			WHERE task_runs.at <= excluded.at`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		at := now()
		for _, run := range runs {
			if run.ClusterID != clusterID {
				return fmt.Errorf("run of task %q on node %q is of cluster %q, not %q", run.TaskID, run.NodeID, run.ClusterID, clusterID)
			}
			when := at
			if !run.At.IsZero() {
				when = normTime(run.At)
			}
			if _, err := stmt.ExecContext(ctx, clusterID, run.NodeID, run.TaskID, run.ExecutionID, run.Digest, s.d.timeArg(when)); err != nil {
				return fmt.Errorf("run of task %q on node %q: %w", run.TaskID, run.NodeID, err)
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return err
		}
		return fmt.Errorf("record %d task runs of cluster %q: %w", len(runs), clusterID, err)
	}
	return nil
}

// NodeTaskRuns returns the last successful run of every task recorded on a
// node, by task id: one query where a preparation asks about each of a
// node's tasks.
func (s *sqlStore) NodeTaskRuns(ctx context.Context, clusterID, nodeID string) (map[string]*model.TaskRun, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT task_id, execution_id, digest, at FROM task_runs
		WHERE cluster_id = $1 AND node_id = $2`, clusterID, nodeID)
	if err != nil {
		return nil, fmt.Errorf("task runs on node %q of cluster %q: %w", nodeID, clusterID, err)
	}
	defer rows.Close()
	out := map[string]*model.TaskRun{}
	for rows.Next() {
		run := model.TaskRun{ClusterID: clusterID, NodeID: nodeID}
		if err := rows.Scan(&run.TaskID, &run.ExecutionID, &run.Digest, timeCol{&run.At}); err != nil {
			return nil, fmt.Errorf("task runs on node %q of cluster %q: %w", nodeID, clusterID, err)
		}
		out[run.TaskID] = &run
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("task runs on node %q of cluster %q: %w", nodeID, clusterID, err)
	}
	return out, nil
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
