// Package nested walks and rebuilds decoded documents: the values JSON and
// YAML decoders give (map[string]any, []any and scalars), as specs,
// settings, parameters and outputs hold them. A walk that reads such a
// value goes through Walk, one that copies it changed through Map (or
// MapAnyOrder when nothing it does needs an order), so all of them visit
// maps in key order and name a value's place the same way,
// "spec.config.items[2]" (Path, Key, Index), the form error messages use.
// Describe names a value's JSON type for those messages, Text and Cut show
// a value in one, and ViaJSON gives a value the form it has on the wire.
//
// It is a leaf: it imports only the standard library, so model, expr,
// kinds, providers and everything above may use it.
package nested
