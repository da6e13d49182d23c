-- Approvals bound to a one-time nonce too: the starter records one per
-- approval or rejection the API is asked for, naming the execution (the
-- workflow id), the principal of the API token (by) and the act
-- (approve, reject); the workflow's approval handler consumes it and takes
-- who decided from the row, not from the Update's payload. Start nonces
-- have no act.
ALTER TABLE start_nonces ADD COLUMN act TEXT;
ALTER TABLE start_nonces ADD COLUMN principal TEXT;
