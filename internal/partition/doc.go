// Package partition holds the end-to-end tests of network partitions: the
// Temporal dev server and `cairn server` listen on a bridge of their own,
// each `cairn agent` runs in a network namespace with its own address
// behind a veth pair, and a test cuts an agent's host off (its bridge port
// stops forwarding: its packets are dropped, as a failed switch or a
// firewall would drop them, while its link stays up) in the middle of a
// step, then heals it. The tests need root and iproute2 (ip, bridge); they
// make and remove their own namespaces and links, failed or not.
package partition
