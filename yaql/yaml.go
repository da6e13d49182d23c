package yaql

import (
	"gopkg.in/yaml.v3"
)

// toYAML renders a value as block YAML with sorted keys (toYaml). Python's
// yaml.safe_dump may quote or indent differently; the two read back to
// the same data.
func toYAML(v any) (string, error) {
	raw, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(raw), nil
}
