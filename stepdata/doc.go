// Package stepdata holds what a step's run keeps in the store and what is
// made of it without running anything: the records a step writes before
// and after its change and when its change is undone, the bound on a
// kept before-state, what a report shows of a change, how a step's
// dependencies appear to its expressions, and the stack record an apply
// leaves. The activities read and write the records; this package only
// encodes and derives, so each piece is testable on its own.
package stepdata
