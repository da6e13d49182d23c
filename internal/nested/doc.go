// Package nested walks and rebuilds decoded documents: the values JSON and
// YAML decoders give (map[string]any, []any and scalars), as specs,
// settings, parameters and outputs hold them. Every walk over such a value
// goes through Walk (to read it) or Map (to copy it changed), so all of
// them visit maps in key order and name a value's place the same way,
// "spec.config.items[2]", the form error messages use.
package nested
