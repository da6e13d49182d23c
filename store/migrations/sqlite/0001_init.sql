-- Cairn schema, SQLite dialect. Timestamps are UTC RFC 3339 text with
-- microseconds (fixed width, so they sort as text); JSON is kept as text.

CREATE TABLE stacks (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    urls          TEXT NOT NULL DEFAULT 'null',
    resources     TEXT NOT NULL DEFAULT 'null',
    snapshot_hash TEXT NOT NULL DEFAULT '',
    last_exec_id  TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

-- Every execution whose record was written to a stack, so a retried write
-- of the same execution is recognised and changes nothing.
CREATE TABLE stack_executions (
    stack_id   TEXT NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
    exec_id    TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    PRIMARY KEY (stack_id, exec_id)
);

CREATE TABLE snapshots (
    hash       TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    content    BLOB NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE step_data (
    exec_id TEXT NOT NULL,
    kind    TEXT NOT NULL,
    step_id TEXT NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (exec_id, kind, step_id)
) WITHOUT ROWID;

CREATE TABLE releases (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE plugins (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    version     TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE clusters (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    release_id TEXT REFERENCES releases (id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX clusters_release_id ON clusters (release_id);

CREATE TABLE cluster_plugins (
    cluster_id TEXT    NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    plugin_id  TEXT    NOT NULL REFERENCES plugins (id),
    PRIMARY KEY (cluster_id, position),
    UNIQUE (cluster_id, plugin_id)
);
CREATE INDEX cluster_plugins_plugin_id ON cluster_plugins (plugin_id);

CREATE TABLE nodes (
    cluster_id TEXT    NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    id         TEXT    NOT NULL,
    position   INTEGER NOT NULL,
    name       TEXT    NOT NULL,
    roles      TEXT    NOT NULL,
    mode       TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (cluster_id, id)
);

-- One graph per owner (release, cluster or plugin) and type. The owner is
-- checked on write and its graphs are deleted with it.
CREATE TABLE graphs (
    layer        TEXT NOT NULL,
    owner_id     TEXT NOT NULL,
    type         TEXT NOT NULL,
    name         TEXT NOT NULL DEFAULT '',
    source       BLOB NOT NULL,
    content_type TEXT NOT NULL DEFAULT '',
    graph        TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (layer, owner_id, type)
);

-- Node history: the last successful run of a task on a node. Not tied to
-- the nodes table, whose rows are replaced whenever the cluster is saved.
CREATE TABLE task_runs (
    cluster_id   TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    node_id      TEXT NOT NULL,
    task_id      TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    digest       TEXT NOT NULL,
    at           TEXT NOT NULL,
    PRIMARY KEY (cluster_id, node_id, task_id)
);
