package graphs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// DeclaredTypes lists, in order and once each, the graph types YAML or
// JSON documents declare: metadata.type of a `kind: Graph` document, type
// of a Fuel graph object {type, name, tasks}. A bare task list declares
// nothing. It reads only the top of each document (no task is decoded
// into the model), so a client can pick the type to upload as before
// sending. Malformed input is an error.
func DeclaredTypes(data []byte) ([]string, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []string
	add := func(t string) {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for i := 0; ; i++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := doc.Content[0]
		var kind, typ, metaType string
		hasTasks := false
		fields(root, func(key string, _, v *yaml.Node) {
			switch key {
			case "kind":
				kind = v.Value
			case "type":
				if v.Kind == yaml.ScalarNode {
					typ = v.Value
				}
			case "tasks":
				hasTasks = true
			case "metadata":
				if v.Kind == yaml.MappingNode {
					fields(v, func(k string, _, mv *yaml.Node) {
						if k == "type" && mv.Kind == yaml.ScalarNode {
							metaType = mv.Value
						}
					})
				}
			}
		})
		switch {
		case strings.EqualFold(kind, "graph"):
			add(metaType)
		case kind == "" && hasTasks:
			add(typ)
		}
	}
}
