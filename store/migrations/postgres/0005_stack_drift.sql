-- A stack's drift checks: whether a drift repairs itself (the schedule
-- itself is Temporal's) and the last check's result: the JSON of a
-- model.DriftCheck (diffs redacted like any plan), sealed like step data
-- by a sealing store; NULL before the first check. Goes with its stack.
CREATE TABLE stack_drift (
    stack_id   TEXT PRIMARY KEY REFERENCES stacks (id) ON DELETE CASCADE,
    repair     INTEGER NOT NULL DEFAULT 0,
    last_check BYTEA,
    updated_at TIMESTAMPTZ NOT NULL
);
