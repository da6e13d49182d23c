// Package partition holds the end-to-end tests of network partitions: the
// Temporal dev server and `cairn server` listen on a bridge of their own,
// each `cairn agent` runs in a network namespace with its own address
// behind a veth pair, and a test cuts an agent's host off (its link goes
// down: its packets are dropped, as a failed switch port or a firewall
// would drop them) in the middle of a step, then heals it. The tests need
// root and iproute2; they make and remove their own namespaces and links.
package partition
