-- A node's deployment data (Fuel's astute.yaml) as an execution of a graph
-- saw it, so that yaql conditions of a later execution can compare with
-- the data of a task's last successful run (task_runs.execution_id). The
-- data holds cluster settings, so the store's sealer encrypts it.
CREATE TABLE deployment_data (
    cluster_id   TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    node_id      TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    data         BLOB NOT NULL,
    PRIMARY KEY (cluster_id, node_id, execution_id)
);
