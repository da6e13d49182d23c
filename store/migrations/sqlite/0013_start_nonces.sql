-- Starts bound to a one-time nonce: the starter records one per start of
-- an apply, destroy, dry-run or graph execution; the workflow's first
-- activity consumes it (consumed_by: the run that did, so a retry of that
-- activity after a consume that succeeded still passes). A workflow input
-- copied into another run finds it consumed, or none, and ends failed.
CREATE TABLE start_nonces (
    nonce       TEXT PRIMARY KEY,
    execution   TEXT NOT NULL,
    consumed_by TEXT,
    created_at  TEXT NOT NULL
);
