package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

const upsertStepData = ` ON CONFLICT (exec_id, kind, step_id) DO UPDATE SET data = excluded.data`

func (s *sqlStore) PutStepData(ctx context.Context, execID, stepID, kind string, data []byte) error {
	if data == nil {
		data = []byte{}
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO step_data (exec_id, kind, step_id, data)
		VALUES ($1, $2, $3, $4)`+upsertStepData, execID, kind, stepID, data); err != nil {
		return fmt.Errorf("put %s data of step %q of %s: %w", kind, stepID, execID, err)
	}
	return nil
}

func (s *sqlStore) GetStepData(ctx context.Context, execID, stepID, kind string) ([]byte, error) {
	var data []byte
	err := s.r.QueryRowContext(ctx, `SELECT data FROM step_data WHERE exec_id = $1 AND kind = $2 AND step_id = $3`,
		execID, kind, stepID).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s data of step %q of %s: %w", kind, stepID, execID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s data of step %q of %s: %w", kind, stepID, execID, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// ListStepData returns every step's data of one kind; the primary key
// (exec_id, kind, step_id) makes it one index range scan.
func (s *sqlStore) ListStepData(ctx context.Context, execID, kind string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := s.EachStepData(ctx, execID, kind, func(id string, data []byte) error {
		out[id] = bytes.Clone(data)
		return nil
	})
	return out, err
}

// EachStepData calls fn with each step's data of one kind of an
// execution, one row at a time: data is valid only during the call (copy
// what is kept). An error of fn ends the listing and is returned as it
// is. Cost: one query; memory for one row at a time.
func (s *sqlStore) EachStepData(ctx context.Context, execID, kind string, fn func(stepID string, data []byte) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT step_id, data FROM step_data WHERE exec_id = $1 AND kind = $2`, execID, kind)
	if err != nil {
		return fmt.Errorf("list %s data of %s: %w", kind, execID, err)
	}
	defer rows.Close()
	var id string
	var data sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &data); err != nil {
			return fmt.Errorf("list %s data of %s: %w", kind, execID, err)
		}
		if data == nil {
			data = sql.RawBytes{}
		}
		if err := fn(id, data); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list %s data of %s: %w", kind, execID, err)
	}
	return nil
}

func (s *sqlStore) DeleteStepData(ctx context.Context, execID string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM step_data WHERE exec_id = $1`, execID); err != nil {
		return fmt.Errorf("delete step data of %s: %w", execID, err)
	}
	return nil
}

// StepDataExecutions pages through the execution ids of step_data; the
// primary key's leading exec_id makes it an index range scan.
func (s *sqlStore) StepDataExecutions(ctx context.Context, after string, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("list executions with step data: limit %d must be positive", limit)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT exec_id FROM step_data WHERE exec_id > $1 GROUP BY exec_id ORDER BY exec_id LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list executions with step data: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list executions with step data: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list executions with step data: %w", err)
	}
	return out, nil
}

// Batch sizes: rows per multi-row INSERT on SQLite (4 bound values a row,
// below its limit of 32,766) and rows per unnest INSERT on PostgreSQL.
const (
	sqliteBatchRows   = 1000
	postgresBatchRows = 10000
)

// PutStepDataBatch upserts all of data in one transaction. Steps are
// written in id order, so concurrent batches over the same steps lock rows
// in the same order and cannot deadlock.
func (s *sqlStore) PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error {
	if len(data) == 0 {
		return nil
	}
	ids := make([]string, 0, len(data))
	for id := range data {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var err error
	if s.d.name == postgresDialect.name {
		err = s.inTx(ctx, func(tx *sql.Tx) error { return putStepDataUnnest(ctx, tx, execID, kind, ids, data) })
	} else {
		err = s.inTx(ctx, func(tx *sql.Tx) error { return putStepDataMultiRow(ctx, tx, execID, kind, ids, data) })
	}
	if err != nil {
		return fmt.Errorf("put %d %s data of %s: %w", len(ids), kind, execID, err)
	}
	return nil
}

// putStepDataUnnest sends a chunk of rows as two arrays in one statement.
func putStepDataUnnest(ctx context.Context, tx *sql.Tx, execID, kind string, ids []string, data map[string][]byte) error {
	for start := 0; start < len(ids); start += postgresBatchRows {
		chunk := ids[start:min(start+postgresBatchRows, len(ids))]
		values := make([][]byte, len(chunk))
		for i, id := range chunk {
			if values[i] = data[id]; values[i] == nil {
				values[i] = []byte{}
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO step_data (exec_id, kind, step_id, data)
			SELECT $1, $2, u.step_id, u.data FROM unnest($3::text[], $4::bytea[]) AS u (step_id, data)`+upsertStepData,
			execID, kind, chunk, values); err != nil {
			return err
		}
	}
	return nil
}

// putStepDataMultiRow writes chunks of rows with one prepared multi-row
// INSERT, reused for every full chunk.
func putStepDataMultiRow(ctx context.Context, tx *sql.Tx, execID, kind string, ids []string, data map[string][]byte) error {
	var full *sql.Stmt
	defer func() {
		if full != nil {
			_ = full.Close()
		}
	}()
	args := make([]any, 0, 4*sqliteBatchRows)
	for start := 0; start < len(ids); start += sqliteBatchRows {
		chunk := ids[start:min(start+sqliteBatchRows, len(ids))]
		args = args[:0]
		for _, id := range chunk {
			v := data[id]
			if v == nil {
				v = []byte{}
			}
			args = append(args, execID, kind, id, v)
		}
		if len(chunk) < sqliteBatchRows {
			if _, err := tx.ExecContext(ctx, multiRowInsert(len(chunk)), args...); err != nil {
				return err
			}
			continue
		}
		if full == nil {
			var err error
			if full, err = tx.PrepareContext(ctx, multiRowInsert(sqliteBatchRows)); err != nil {
				return err
			}
		}
		if _, err := full.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// multiRowInsert builds an upsert of n rows with anonymous placeholders:
// SQLite resolves each numbered one ($N) by a linear search, which made
// large statements quadratic.
func multiRowInsert(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO step_data (exec_id, kind, step_id, data) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?, ?, ?, ?)")
	}
	b.WriteString(upsertStepData)
	return b.String()
}
