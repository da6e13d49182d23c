-- The audit trail: one row per change made or refused through the API.
-- Never a body, a secret or a token. Pruned by age (retention).
CREATE TABLE audit (
    id         BIGSERIAL PRIMARY KEY,
    at         TIMESTAMPTZ NOT NULL,
    principal  TEXT NOT NULL DEFAULT '',
    method     TEXT NOT NULL,
    route      TEXT NOT NULL,
    path       TEXT NOT NULL,
    stack      TEXT NOT NULL DEFAULT '',
    cluster    TEXT NOT NULL DEFAULT '',
    release_id TEXT NOT NULL DEFAULT '',
    execution  TEXT NOT NULL DEFAULT '',
    status     INTEGER NOT NULL,
    code       TEXT NOT NULL DEFAULT '',
    request_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_principal ON audit (principal, id);
