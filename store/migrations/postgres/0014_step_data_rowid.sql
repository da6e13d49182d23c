-- SQLite's step_data moves to a rowid table (see its 0014). PostgreSQL
-- keeps rows in a heap and its primary key in an index already: nothing
-- to change.
SELECT 1;
