-- Teams: principals (users and service accounts), their API tokens and
-- labels that token scopes select stacks, clusters and releases by. A
-- token is kept as its SHA-256 only; prefix is its first characters, for
-- recognition. roles is the JSON list of the token's grants.
CREATE TABLE principals (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    kind       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    disabled   INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
    token_hash   BLOB NOT NULL,
    prefix       TEXT NOT NULL,
    roles        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT,
    last_used    TEXT
);
CREATE INDEX api_tokens_principal ON api_tokens (principal_id);

-- Labels of a stack, cluster or release (kind), as a JSON object.
CREATE TABLE labels (
    kind     TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    labels   TEXT NOT NULL,
    PRIMARY KEY (kind, owner_id)
);
