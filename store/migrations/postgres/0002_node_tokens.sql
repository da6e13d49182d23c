-- Node credentials: the SHA-256 of each agent node's token, never the
-- token itself. A token goes with its cluster, and with its node when the
-- node leaves the cluster or stops being an agent node (PutCluster).
CREATE TABLE node_tokens (
    cluster_id TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    node_id    TEXT NOT NULL,
    token_hash BYTEA NOT NULL,
    PRIMARY KEY (cluster_id, node_id)
);
