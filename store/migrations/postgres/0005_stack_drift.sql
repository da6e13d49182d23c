-- A stack's drift checks: whether a drift repairs itself (the schedule
-- itself is Temporal's) and the last check's result as JSON text
-- (model.DriftCheck; diffs redacted like any plan). Goes with its stack.
CREATE TABLE stack_drift (
    stack_id   TEXT PRIMARY KEY REFERENCES stacks (id) ON DELETE CASCADE,
    repair     INTEGER NOT NULL DEFAULT 0,
    last_check TEXT NOT NULL DEFAULT 'null',
    updated_at TIMESTAMPTZ NOT NULL
);
