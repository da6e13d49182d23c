-- Node facts: what an agent reported of its host when it started
-- (hostname, addresses, OS, CPUs, memory, boot id), one JSON document a
-- node (model.NodeFacts), replaced at each report. Facts go with their
-- node, as tokens do (PutCluster, DeleteCluster).
CREATE TABLE node_facts (
    cluster_id TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    node_id    TEXT NOT NULL,
    facts      TEXT NOT NULL,
    PRIMARY KEY (cluster_id, node_id)
);
