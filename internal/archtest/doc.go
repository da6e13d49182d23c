// Package archtest holds the architecture test: the rules of which Cairn
// package may import which, checked against the module's imports on every
// go test run. It has no code of its own; see arch_test.go.
package archtest
