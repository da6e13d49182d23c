// Package fleete2e holds the end-to-end tests of a fleet: `cairn server`
// and many `cairn agent` processes, built from this module, against a
// real Temporal dev server, executing fuel-library's release graph on a
// cluster of local and agent nodes; the tests kill agents as a crashed
// host would, and restart the server under them.
package fleete2e
