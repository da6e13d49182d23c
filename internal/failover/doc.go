// Package failover holds the end-to-end tests of losing a server: real
// `cairn server` processes on one PostgreSQL store and one Temporal dev
// server, one of them stopped (SIGTERM, as a rolling upgrade does) or
// killed (SIGKILL) in the middle of an apply, the other carrying it to the
// end. The scenario (StartServer, RunFailover and the checks of its
// result) is exported for tests only: internal/clustere2e runs it on
// Temporal's production topology.
package failover
