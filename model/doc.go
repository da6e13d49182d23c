// Package model holds Cairn's domain types: resources and tasks, packages,
// typed graphs and their layers, stacks, clusters and nodes, plans and
// reports. It is a leaf: it imports nothing of Temporal, the store or the
// providers, so every layer can share it.
package model
