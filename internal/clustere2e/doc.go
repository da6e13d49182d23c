// Package clustere2e holds the end-to-end tests on Temporal's production
// topology (scripts/temporal-cluster.sh): a frontend, two history hosts,
// matching and worker as separate processes on PostgreSQL, started once
// for the package. Real `cairn server` and `cairn agent` processes run an
// apply, a graph on agents and the two-server failover on it, and the
// tests kill a history host, restart matching and restart the frontend
// in the middle of an apply and of a graph: the execution completes,
// nothing runs twice, no step fails, and the stall each fault causes is
// measured (docs/operating.md has the figures).
package clustere2e
