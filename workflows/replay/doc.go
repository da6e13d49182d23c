// Package replay holds the replay tests of Cairn's workflows: histories
// of every workflow type, recorded from real executions of a release
// (testdata/<release>/), are replayed against the workflows of this build
// with the worker's own registration, so a change that would break an
// execution in flight across an upgrade fails before it ships. The
// recorder that writes them runs the same scenarios on a dev server; see
// docs/operating.md "Upgrades".
package replay
