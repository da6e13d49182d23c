package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// SetNodeTokenHash keeps hash (the SHA-256 of a node's token) as the
// credential of an agent node, replacing any earlier one. The node must be
// in the cluster with mode agent (ErrNotFound otherwise): local nodes are
// served by the server and have no credential.
func (s *sqlStore) SetNodeTokenHash(ctx context.Context, clusterID, nodeID string, hash []byte) error {
	if len(hash) == 0 {
		return errors.New("set node token: empty hash")
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM nodes WHERE cluster_id = $1 AND id = $2 AND mode = $3`,
			clusterID, nodeID, string(model.NodeAgent)).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("agent node %q of cluster %q: %w", nodeID, clusterID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO node_tokens (cluster_id, node_id, token_hash) VALUES ($1, $2, $3)
			ON CONFLICT (cluster_id, node_id) DO UPDATE SET token_hash = excluded.token_hash`, clusterID, nodeID, hash)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return err
		}
		return fmt.Errorf("set token of node %q of cluster %q: %w", nodeID, clusterID, err)
	}
	return nil
}

// NodeTokenHash returns the hash kept for an agent node's token
// (ErrNotFound when none was issued, or the node is gone or no longer an
// agent node).
func (s *sqlStore) NodeTokenHash(ctx context.Context, clusterID, nodeID string) ([]byte, error) {
	var hash []byte
	err := s.r.QueryRowContext(ctx, `SELECT t.token_hash FROM node_tokens t
		JOIN nodes n ON n.cluster_id = t.cluster_id AND n.id = t.node_id AND n.mode = $3
		WHERE t.cluster_id = $1 AND t.node_id = $2`, clusterID, nodeID, string(model.NodeAgent)).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("token of node %q of cluster %q: %w", nodeID, clusterID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("token of node %q of cluster %q: %w", nodeID, clusterID, err)
	}
	return hash, nil
}

// dropStaleNodeTokens removes the tokens of nodes that left the cluster or
// are no longer agent nodes, so a node added again later does not inherit
// an old credential.
func dropStaleNodeTokens(ctx context.Context, tx *sql.Tx, clusterID string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM node_tokens WHERE cluster_id = $1 AND NOT EXISTS (
		SELECT 1 FROM nodes n WHERE n.cluster_id = node_tokens.cluster_id AND n.id = node_tokens.node_id AND n.mode = $2)`,
		clusterID, string(model.NodeAgent))
	return err
}

// DeleteNodeTokenHash revokes an agent node's token: the next request
// presenting it is refused. ErrNotFound when the node has none.
func (s *sqlStore) DeleteNodeTokenHash(ctx context.Context, clusterID, nodeID string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM node_tokens WHERE cluster_id = $1 AND node_id = $2`, clusterID, nodeID)
	if err != nil {
		return fmt.Errorf("revoke token of node %q of cluster %q: %w", nodeID, clusterID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("token of node %q of cluster %q: %w", nodeID, clusterID, ErrNotFound)
	}
	return nil
}
