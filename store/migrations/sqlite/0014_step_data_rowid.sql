-- step_data keeps its rows in a rowid table, its key in an index of its
-- own. A WITHOUT ROWID table is one b-tree of whole rows ordered by key,
-- and SQLite compares a key with a row that overflows its page by reading
-- the whole row: every step record written beside an execution's step
-- index (megabytes) or a unit's page (tens of KiB) read those blobs again,
-- which took half of the CPU of an apply of 100,000 files. The index holds
-- only the three key columns, so a look-up reads no blob.
CREATE TABLE step_data_rows (
    exec_id TEXT NOT NULL,
    kind    TEXT NOT NULL,
    step_id TEXT NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (exec_id, kind, step_id)
);
INSERT INTO step_data_rows (exec_id, kind, step_id, data)
    SELECT exec_id, kind, step_id, data FROM step_data;
DROP TABLE step_data;
ALTER TABLE step_data_rows RENAME TO step_data;
