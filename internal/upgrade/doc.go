// Package upgrade holds the rolling upgrade test: `cairn server`s and
// `cairn agent`s of an earlier build (the last release's tag and the
// parent commit) start an apply, a graph execution paused on a failed
// step, a plan waiting for approval and a drift schedule on one Temporal
// dev server and one PostgreSQL store; they are then replaced one by one
// by processes of this build, which carry every one of them to its end.
package upgrade
