// Command platformplug is a Deployster protocol plugin for the tests over a
// platform of its own: each object is DIR/ID.json ({id, name, size}) with
// an id the platform picks, as an API's would be. The state action finds
// the object by config.id, else by name; create and update append a line
// to DIR/writes.log, so a test sees every write the plugin made. Its list
// action answers every object with its id, its labels and a config naming
// that id.
// With --no-list it declares no list action, as an older plugin.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

type request struct {
	Name   string         `json:"name"`
	Config map[string]any `json:"config"`
}

type object struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Size       any      `json:"size,omitempty"`
	Labels     []string `json:"labels,omitempty"`
	LabelNames []string `json:"labelNames,omitempty"`
}

func main() {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		fail(err)
	}
	args := slices.DeleteFunc(slices.Clone(os.Args[1:]), func(a string) bool { return a == "--no-list" })
	mode := ""
	if len(args) > 0 {
		mode = args[len(args)-1]
	}
	dir, _ := req.Config["dir"].(string)
	switch mode {
	case "":
		init := map[string]any{
			"config_schema": map[string]any{
				"type": "object", "required": []any{"dir"},
				"properties": map[string]any{"dir": map[string]any{"type": "string"}, "id": map[string]any{"type": "string"},
					"name": map[string]any{"type": "string"}, "size": map[string]any{"type": "integer"}},
			},
			"state_action": map[string]any{"args": []any{"state"}},
		}
		if !slices.Contains(os.Args[1:], "--no-list") {
			init["list_action"] = map[string]any{"args": []any{"list"}}
		}
		emit(init)
	case "state":
		obj, ok := find(dir, req)
		switch {
		case !ok:
			emit(map[string]any{"status": "STALE", "actions": []any{map[string]any{"name": "create", "args": []any{"create"}}}})
		case obj.Name != want(req) || fmt.Sprint(obj.Size) != fmt.Sprint(req.Config["size"]):
			emit(map[string]any{"status": "STALE", "actions": []any{map[string]any{"name": "update", "args": []any{"update"}}}})
		default:
			emit(map[string]any{"status": "VALID", "state": map[string]any{"id": obj.ID, "name": obj.Name}})
		}
	case "create", "update":
		obj, ok := find(dir, req)
		if !ok {
			var b [4]byte
			_, _ = rand.Read(b[:])
			obj = object{ID: hex.EncodeToString(b[:])}
		}
		obj.Name, obj.Size = want(req), req.Config["size"]
		write(dir, obj)
		logWrite(dir, mode+" "+obj.ID)
	case "list":
		var instances []any
		for _, obj := range all(dir) {
			instances = append(instances, map[string]any{"name": obj.Name, "id": obj.ID, "labels": append([]string{}, obj.Labels...), "labelNames": append([]string{}, obj.LabelNames...),
				"config": map[string]any{"dir": dir, "id": obj.ID, "name": obj.Name, "size": obj.Size}})
		}
		emit(map[string]any{"instances": instances})
	default:
		fail(fmt.Errorf("unknown mode %q", mode))
	}
}

// want is the object's name: config.name, else the resource's.
func want(req request) string {
	if n, _ := req.Config["name"].(string); n != "" {
		return n
	}
	return req.Name
}

// find is the object of config.id, else the one named as wanted.
func find(dir string, req request) (object, bool) {
	if id, _ := req.Config["id"].(string); id != "" {
		for _, obj := range all(dir) {
			if obj.ID == id {
				return obj, true
			}
		}
		return object{}, false
	}
	for _, obj := range all(dir) {
		if obj.Name == want(req) {
			return obj, true
		}
	}
	return object{}, false
}

func all(dir string) []object {
	entries, err := os.ReadDir(dir)
	if err != nil {
		fail(err)
	}
	var out []object
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			fail(err)
		}
		var obj object
		if err := json.Unmarshal(raw, &obj); err != nil {
			fail(err)
		}
		out = append(out, obj)
	}
	return out
}

func write(dir string, obj object) {
	raw, _ := json.Marshal(obj)
	if err := os.WriteFile(filepath.Join(dir, obj.ID+".json"), raw, 0o644); err != nil {
		fail(err)
	}
}

func logWrite(dir, line string) {
	f, err := os.OpenFile(filepath.Join(dir, "writes.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	_, _ = fmt.Fprintln(f, line)
}

func emit(v any) {
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
