-- Four eyes: a stack's or cluster's approval setting (PUT
-- /v1/stacks/{id}/approvals, /v1/clusters/{id}/approvals). Goes with its
-- stack or cluster.
CREATE TABLE stack_approvals (
    stack_id           TEXT PRIMARY KEY REFERENCES stacks (id) ON DELETE CASCADE,
    required           INTEGER NOT NULL,
    author_may_approve INTEGER NOT NULL DEFAULT 0,
    updated_at         TIMESTAMPTZ NOT NULL
);
CREATE TABLE cluster_approvals (
    cluster_id         TEXT PRIMARY KEY REFERENCES clusters (id) ON DELETE CASCADE,
    required           INTEGER NOT NULL,
    author_may_approve INTEGER NOT NULL DEFAULT 0,
    updated_at         TIMESTAMPTZ NOT NULL
);
