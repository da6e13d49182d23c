// Package graphe2e holds the end-to-end tests of graph executions: a real
// Temporal dev server, a SQLite store, local nodes served in-process, each
// in its own directory, and `cairn agent` processes for agent nodes, which
// the tests kill and restart.
package graphe2e
