// Command jsonfile is an external provider speaking the Deployster protocol:
// it manages one JSON file, <config.dir>/<config.name>.json, holding
// config.content. It declares state, delete, restore and list actions, and
// appends each invocation's phase to $EXT_LOG when set, so tests can count
// runs.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

type config struct {
	Dir     string         `json:"dir"`
	Name    string         `json:"name"`
	Content map[string]any `json:"content"`
}

type request struct {
	Name    string         `json:"name"`
	Type    string         `json:"type"`
	Version string         `json:"version"`
	Verbose bool           `json:"verbose"`
	Config  *config        `json:"config"`
	State   map[string]any `json:"state"`
}

type action struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Args        []string `json:"args,omitempty"`
}

func main() {
	phase := "init"
	if len(os.Args) > 1 {
		phase = os.Args[1]
	}
	if log := os.Getenv("EXT_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, phase)
			f.Close()
		}
	}
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail("reading the request: %v", err)
	}
	if req.Name == "" || req.Version == "" {
		fail("request without name or version")
	}
	if phase == "init" {
		emit(map[string]any{
			"config_schema": map[string]any{
				"type":     "object",
				"required": []string{"dir", "name", "content"},
				"properties": map[string]any{
					"dir":     map[string]any{"type": "string", "minLength": 1},
					"name":    map[string]any{"type": "string", "pattern": "^[a-z0-9_-]+$"},
					"content": map[string]any{"type": "object"},
				},
				"additionalProperties": false,
			},
			"plugs":          map[string]any{"cache": map[string]any{"container_path": "/cache", "optional": true}},
			"state_action":   map[string]any{"args": []string{"state"}},
			"delete_action":  map[string]any{"name": "delete", "args": []string{"delete"}},
			"restore_action": map[string]any{"name": "restore", "args": []string{"restore"}},
			"list_action":    map[string]any{"name": "list", "args": []string{"list"}},
		})
		return
	}
	if req.Config == nil {
		fail("%s: no config", phase)
	}
	c := req.Config
	path := filepath.Join(c.Dir, c.Name+".json")
	switch phase {
	case "state":
		current, err := readContent(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			emit(map[string]any{"status": "STALE", "actions": []action{{Name: "create", Description: "create " + c.Name + ".json", Args: []string{"write"}}}})
		case err != nil:
			fail("state: %v", err)
		case reflect.DeepEqual(current, normalize(c.Content)):
			st := stateOf(c, current)
			if m := os.Getenv("EXT_MARK"); m != "" {
				st["marker"] = m
			}
			emit(map[string]any{"status": "VALID", "state": st})
		default:
			emit(map[string]any{"status": "STALE", "staleState": stateOf(c, current), "actions": []action{{Name: "update", Description: "update " + c.Name + ".json", Args: []string{"write"}}}})
		}
	case "write":
		if err := writeContent(path, c.Content); err != nil {
			fail("write: %v", err)
		}
		fmt.Println("wrote", path) // actions may print anything
	case "delete":
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fail("delete: %v", err)
		}
	case "restore":
		content, ok := req.State["content"].(map[string]any)
		if !ok {
			fail("restore: no previous content in state")
		}
		if err := writeContent(path, content); err != nil {
			fail("restore: %v", err)
		}
	case "list":
		entries, err := os.ReadDir(c.Dir)
		if err != nil {
			fail("list: %v", err)
		}
		var names []string
		for _, e := range entries {
			if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		instances := []any{}
		for _, n := range names {
			content, err := readContent(filepath.Join(c.Dir, n+".json"))
			if err != nil {
				fail("list: %v", err)
			}
			cc := config{Dir: c.Dir, Name: n, Content: content}
			instances = append(instances, map[string]any{"name": n, "config": cc, "state": stateOf(&cc, content)})
		}
		emit(map[string]any{"instances": instances})
	default:
		fail("unknown phase %q", phase)
	}
}

func stateOf(c *config, content map[string]any) map[string]any {
	return map[string]any{"id": c.Name, "path": filepath.Join(c.Dir, c.Name+".json"), "content": content}
}

func readContent(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func writeContent(path string, content map[string]any) error {
	raw, err := json.Marshal(content)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}

func normalize(m map[string]any) map[string]any {
	raw, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

func emit(v any) {
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		fail("writing the answer: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "jsonfile: "+format+"\n", args...)
	os.Exit(1)
}
