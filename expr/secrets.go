package expr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/internal/nested"
	"gopkg.in/yaml.v3"
)

// SecretEnvPrefix prefixes environment variables that carry secrets:
// secret "db-password" is read from CAIRN_SECRET_DB_PASSWORD.
const SecretEnvPrefix = "CAIRN_SECRET_"

// Secrets is a read-only secret source: a YAML or JSON map file, overridden
// by CAIRN_SECRET_<KEY> environment variables.
type Secrets struct {
	values map[string]string
	env    func(string) (string, bool)
}

// LoadSecrets reads a secrets file (a YAML or JSON map of key to value;
// nested maps are flattened with dots). An empty path means environment
// variables only.
func LoadSecrets(path string) (*Secrets, error) {
	s := &Secrets{values: map[string]string{}, env: os.LookupEnv}
	if path == "" {
		return s, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	var doc any
	if strings.EqualFold(filepath.Ext(path), ".json") {
		err = json.Unmarshal(b, &doc)
	} else {
		err = yaml.Unmarshal(b, &doc)
	}
	if err != nil {
		// The parser may quote the offending text, which is a secret.
		return nil, fmt.Errorf("secrets file %s is not valid YAML or JSON", path)
	}
	if doc == nil {
		return s, nil
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("secrets file %s must hold a map of key to value, got %s", path, nested.Describe(doc))
	}
	if err := flattenSecrets(s.values, "", m); err != nil {
		return nil, fmt.Errorf("secrets file %s: %w", path, err)
	}
	return s, nil
}

// NewSecrets builds a secret source from a map and an environment lookup
// (nil: no environment), for embedding and tests.
func NewSecrets(values map[string]string, env func(string) (string, bool)) *Secrets {
	s := &Secrets{values: make(map[string]string, len(values)), env: env}
	for k, v := range values {
		s.values[k] = v
	}
	return s
}

func flattenSecrets(dst map[string]string, prefix string, m map[string]any) error {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		switch x := v.(type) {
		case string:
			dst[key] = x
		case bool:
			dst[key] = strconv.FormatBool(x)
		case int:
			dst[key] = strconv.Itoa(x)
		case int64:
			dst[key] = strconv.FormatInt(x, 10)
		case float64:
			dst[key] = strconv.FormatFloat(x, 'f', -1, 64)
		case map[string]any:
			if err := flattenSecrets(dst, key, x); err != nil {
				return err
			}
		case nil:
		default:
			return fmt.Errorf("secret %q must be a string, got %s", key, nested.Describe(v))
		}
	}
	return nil
}

// Lookup returns a secret: CAIRN_SECRET_<KEY> first (the key upper-cased,
// every character other than a letter or digit turned into "_"), then the
// file.
func (s *Secrets) Lookup(key string) (string, bool) {
	if s == nil {
		return "", false
	}
	if s.env != nil {
		if v, ok := s.env(SecretEnvName(key)); ok {
			return v, true
		}
	}
	v, ok := s.values[key]
	return v, ok
}

// SecretEnvName is the environment variable that carries secret key.
func SecretEnvName(key string) string {
	var b strings.Builder
	b.WriteString(SecretEnvPrefix)
	for _, r := range strings.ToUpper(key) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// SecretValues returns the values of the secrets spec refers to (secretRef
// and the secret function with a literal key) that lookup knows, for
// redacting a provider's messages.
func SecretValues(spec map[string]any, lookup func(string) (string, bool)) []string {
	if lookup == nil {
		return nil
	}
	_, keys, _ := Scan(spec)
	set := stringSet{}
	for _, k := range keys {
		if v, ok := lookup(k); ok && v != "" {
			set.add(v)
		}
	}
	return set.sorted()
}
