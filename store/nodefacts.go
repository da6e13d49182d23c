package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// SetNodeFacts keeps the facts an agent node reported, replacing the
// earlier report. The node must be in the cluster with mode agent
// (ErrNotFound otherwise). The caller validates them
// (model.NodeFacts.Validate); they are not sealed: names, addresses and
// versions of a host are not secrets.
func (s *sqlStore) SetNodeFacts(ctx context.Context, clusterID, nodeID string, facts *model.NodeFacts) error {
	raw, err := json.Marshal(facts)
	if err != nil {
		return fmt.Errorf("facts of node %q: %w", nodeID, err)
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM nodes WHERE cluster_id = $1 AND id = $2 AND mode = $3`,
			clusterID, nodeID, string(model.NodeAgent)).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("agent node %q of cluster %q: %w", nodeID, clusterID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO node_facts (cluster_id, node_id, facts) VALUES ($1, $2, $3)
			ON CONFLICT (cluster_id, node_id) DO UPDATE SET facts = excluded.facts`, clusterID, nodeID, string(raw))
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return err
		}
		return fmt.Errorf("set facts of node %q of cluster %q: %w", nodeID, clusterID, err)
	}
	return nil
}

// loadNodeFacts sets the Facts of the nodes of the clusters in byID from
// the rows that where (a filter on cluster_id, or empty) selects. A
// report that no longer decodes is left out rather than failing the
// cluster: facts are the agent's, reported again at its next start.
func loadNodeFacts(ctx context.Context, tx *sql.Tx, byID map[string]*model.Cluster, where string, args ...any) error {
	rows, err := tx.QueryContext(ctx, `SELECT cluster_id, node_id, facts FROM node_facts `+where, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	nodes := map[[2]string]*model.Node{}
	for cid, c := range byID {
		for i := range c.Nodes {
			nodes[[2]string{cid, c.Nodes[i].ID}] = &c.Nodes[i]
		}
	}
	for rows.Next() {
		var cid, nid, raw string
		if err := rows.Scan(&cid, &nid, &raw); err != nil {
			return err
		}
		n := nodes[[2]string{cid, nid}]
		if n == nil {
			continue
		}
		var f model.NodeFacts
		if json.Unmarshal([]byte(raw), &f) == nil {
			n.Facts = &f
		}
	}
	return rows.Err()
}

// dropStaleNodeFacts removes the facts of nodes that left the cluster or
// are no longer agent nodes.
func dropStaleNodeFacts(ctx context.Context, tx *sql.Tx, clusterID string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM node_facts WHERE cluster_id = $1 AND NOT EXISTS (
		SELECT 1 FROM nodes n WHERE n.cluster_id = node_facts.cluster_id AND n.id = node_facts.node_id AND n.mode = $2)`,
		clusterID, string(model.NodeAgent))
	return err
}
