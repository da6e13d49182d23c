package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// maxParamsFile bounds an env or secrets file: the server's body limit
// bounds the envelope anyway.
const maxParamsFile = 1 << 20

// paramFlags are the values plan and apply bring for a package's env and
// secret refs and its variables: --env, --secret and --var (KEY=VALUE,
// repeatable) over --env-file and --secrets-file (KEY=VALUE lines) and
// --var-file (a YAML or JSON object).
type paramFlags struct {
	env, secrets, vars             []string
	envFile, secretsFiles, varFile string
}

func (f *paramFlags) register(fs *pflag.FlagSet) {
	f.registerEnvAndVars(fs)
	fs.StringArrayVar(&f.secrets, "secret", nil, "KEY=VALUE: secret KEY, kept sealed by the server for the stack (repeatable; prefer --secrets-file, command lines are visible to other users)")
	fs.StringVar(&f.secretsFiles, "secrets-file", "", "file of KEY=VALUE lines (# comments) for secrets; --secret wins over it")
}

// registerEnvAndVars registers the flags of env ref values and variables
// alone (validate's: it has no use for secrets).
func (f *paramFlags) registerEnvAndVars(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.env, "env", nil, "KEY=VALUE: a value for env ref KEY for this execution, over the server's environment (repeatable)")
	fs.StringVar(&f.envFile, "env-file", "", "file of KEY=VALUE lines (# comments) for env refs; --env wins over it")
	fs.StringArrayVar(&f.vars, "var", nil, "NAME=VALUE: variable NAME (a string) for expressions, {{ .vars.NAME }} (repeatable)")
	fs.StringVar(&f.varFile, "var-file", "", "YAML or JSON object of variables (any values); --var wins over it")
}

// params builds the parameters from the flags; files first, then flags.
func (f *paramFlags) params() (model.ApplyParams, error) {
	env, err := paramValues("--env", f.envFile, f.env)
	if err != nil {
		return model.ApplyParams{}, err
	}
	secrets, err := paramValues("--secret", f.secretsFiles, f.secrets)
	if err != nil {
		return model.ApplyParams{}, err
	}
	vars, err := varValues(f.varFile, f.vars)
	if err != nil {
		return model.ApplyParams{}, err
	}
	return model.ApplyParams{EnvRefs: env, Secrets: secrets, Vars: vars}, nil
}

// varValues reads the variables of file (a YAML or JSON object, any
// values) and then pairs (string values), a later name winning.
func varValues(file string, pairs []string) (map[string]any, error) {
	out := map[string]any{}
	if file != "" {
		data, err := readParamsFile(file)
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: want a YAML or JSON object of variables: %w", file, err)
		}
		for k, v := range doc {
			out[k] = v
		}
	}
	for _, p := range pairs {
		k, v, err := splitParam(p)
		if err != nil {
			return nil, fmt.Errorf("--var: %w", err)
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// paramValues reads file (if any) and then pairs, a later key winning.
func paramValues(flag, file string, pairs []string) (map[string]string, error) {
	out := map[string]string{}
	if file != "" {
		data, err := readParamsFile(file)
		if err != nil {
			return nil, err
		}
		if err := parseParamLines(data, out); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	for _, p := range pairs {
		k, v, err := splitParam(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func readParamsFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read parameters: %w", err)
	}
	if fi.Size() > maxParamsFile {
		return nil, fmt.Errorf("%s: %d bytes, at most %d", path, fi.Size(), maxParamsFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read parameters: %w", err)
	}
	return data, nil
}

// parseParamLines reads KEY=VALUE lines into out: blank lines and lines
// starting with # are skipped, "export " before a key is allowed, and a
// value in matching quotes loses them. Errors name the line, never its
// value.
func parseParamLines(data []byte, out map[string]string) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), maxParamsFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, err := splitParam(line)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		out[k] = unquote(strings.TrimSpace(v))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read lines: %w", err)
	}
	return nil
}

// splitParam splits KEY=VALUE; the value may be empty and hold "=".
func splitParam(s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("want KEY=VALUE, got no key or no \"=\"")
	}
	return k, v, nil
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
