-- Packages sent to a stack in parts (POST /v1/stacks/{id}/uploads). An
-- upload lives until expires_at (moved on by each part); once an apply or
-- dry-run used it, its parts are copied into snapshots, its package is
-- snapshot_hash (with what later runs need to know of it in summary) and
-- the parts' rows are gone. The rows of an expired
-- upload stay a while without their parts, so it answers 410.
CREATE TABLE uploads (
    id            TEXT PRIMARY KEY,
    stack_id      TEXT NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    snapshot_hash TEXT NOT NULL DEFAULT '',
    summary       BLOB NOT NULL DEFAULT X''
);
CREATE INDEX uploads_expires_at ON uploads (expires_at);

-- One part: its body's hash and size (what quotas count), what it holds,
-- where it sits in the stream it was cut from, what the commit reads of it
-- (info, JSON) and its content (a package-part snapshot, kept under
-- content_hash once used).
CREATE TABLE upload_parts (
    upload_id    TEXT NOT NULL REFERENCES uploads (id) ON DELETE CASCADE,
    part         INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    documents    INTEGER NOT NULL,
    resources    INTEGER NOT NULL,
    kinds        INTEGER NOT NULL,
    name         TEXT NOT NULL,
    line         INTEGER NOT NULL,
    document     INTEGER NOT NULL,
    created_at   TEXT NOT NULL,
    info         BLOB NOT NULL,
    content_hash TEXT NOT NULL,
    content      BLOB NOT NULL,
    PRIMARY KEY (upload_id, part)
);
