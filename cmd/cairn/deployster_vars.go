package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/graphs"
)

// Deployster's auto-variables files: vars.auto.yaml and vars.NAME.auto.yaml
// in ~/.deployster, then in the working directory.
var autoVarsFile = regexp.MustCompile(`^vars\.(.*\.)?auto\.yaml$`)

// autoVarsExpr is the one expression an auto-variables file may hold: a
// variable read before it, by name or dotted path ({{ region }}).
var autoVarsExpr = regexp.MustCompile(`\{\{-?\s*([^{}]*?)\s*-?\}\}`)
var autoVarsPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)*$`)

// maxAutoVarsFile bounds one auto-variables file.
const maxAutoVarsFile = 1 << 20

// deploysterAutoVars reads the auto-variables files as Deployster does:
// those of dirs in order (Deployster's are ~/.deployster and the working
// directory), each directory's in name order; each file is rendered with
// the variables read before it ({{ NAME }} or {{ NAME.KEY }}; a name not
// defined yet is an error, as with Jinja2's StrictUndefined) and merged
// into them deeply (objects merge, other values replace). It returns the
// variables and the files read. A directory that does not exist has none.
func deploysterAutoVars(dirs ...string) (map[string]any, []string, error) {
	vars := map[string]any{}
	var read []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, nil, fmt.Errorf("auto-variables: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() || !autoVarsFile.MatchString(e.Name()) {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if err := addAutoVars(vars, path); err != nil {
				return nil, nil, err
			}
			read = append(read, path)
		}
	}
	return vars, read, nil
}

// addAutoVars renders and merges one file into vars.
func addAutoVars(vars map[string]any, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("auto-variables: %w", err)
	}
	if info.Size() > maxAutoVarsFile {
		return fmt.Errorf("auto-variables %s: %d bytes, over the limit of %d", path, info.Size(), maxAutoVarsFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("auto-variables: %w", err)
	}
	var bad error
	text := autoVarsExpr.ReplaceAllStringFunc(string(data), func(m string) string {
		inner := autoVarsExpr.FindStringSubmatch(m)[1]
		if !autoVarsPath.MatchString(inner) {
			bad = fmt.Errorf("auto-variables %s: %q: only a variable's name or dotted path is read here", path, m)
			return m
		}
		v, ok := lookupPath(vars, strings.Split(inner, "."))
		if !ok {
			bad = fmt.Errorf("auto-variables %s: %q is undefined (only variables of files read before this one are)", path, inner)
			return m
		}
		return fmt.Sprint(v)
	})
	if bad != nil {
		return bad
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return fmt.Errorf("auto-variables %s: %w", path, err)
	}
	mergeVars(vars, doc)
	return nil
}

func lookupPath(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, k := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// mergeVars merges src into dst as Deployster's merge_into does: objects
// merge key by key, any other value replaces.
func mergeVars(dst, src map[string]any) {
	for k, v := range src {
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			mergeVars(dm, sm)
			continue
		}
		dst[k] = v
	}
}

// withDeploysterAutoVars puts the auto-variables files (of ~/.deployster
// and the working directory) under the variables the command was given,
// which win, as Deployster reads --var and --var-file after them.
func withDeploysterAutoVars(given map[string]any) (map[string]any, error) {
	var dirs []string
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".deployster"))
	}
	dirs = append(dirs, ".")
	vars, _, err := deploysterAutoVars(dirs...)
	if err != nil {
		return nil, err
	}
	mergeVars(vars, given)
	return vars, nil
}

// deploysterVars adds the auto-variables files under given when the
// payload holds a Deployster manifest (and only then); given otherwise.
func (p *payload) deploysterVars(given map[string]any) (map[string]any, error) {
	if p == nil || !graphs.HasDeploysterManifest(p.doc.Data) {
		return given, nil
	}
	return withDeploysterAutoVars(given)
}
