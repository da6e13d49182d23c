// Package failover holds the end-to-end tests of losing a server: real
// `cairn server` processes on one PostgreSQL store and one Temporal dev
// server, one of them stopped (SIGTERM, as a rolling upgrade does) or
// killed (SIGKILL) in the middle of an apply, the other carrying it to the
// end.
package failover
