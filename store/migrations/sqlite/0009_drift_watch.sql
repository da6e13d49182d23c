-- Whether a stack's resources are watched for changes (PUT
-- /v1/stacks/{id}/drift {"watch": true}): a server re-arms its watchers
-- from this column when it starts.
ALTER TABLE stack_drift ADD COLUMN watch INTEGER NOT NULL DEFAULT 0;
