// Package examples embeds the example packages and graphs, so `cairn
// server --example-cluster` can seed a local cluster without the source tree.
package examples

import "embed"

// Files holds every example document.
//
//go:embed hello graphs platform
var Files embed.FS
