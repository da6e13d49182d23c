// Command cloudsim plays the resource types of Deployster's documentation
// (acme/deployster-gcp-disk, acme/deployster-gcp-vm) in a directory: each
// resource is $CLOUDSIM_DIR/<config.name>.json, holding its config; a disk
// is created in zone $CLOUDSIM_ZONE, which its state reports. It speaks
// the Deployster protocol: init (no argument), state, and the actions it
// asks for (apply, delete).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

type request struct {
	Name   string         `json:"name"`
	Type   string         `json:"type"`
	Config map[string]any `json:"config"`
}

func main() {
	phase := "init"
	if len(os.Args) > 1 {
		phase = os.Args[1]
	}
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail("reading the request: %v", err)
	}
	if phase == "init" {
		emit(map[string]any{
			"config_schema": map[string]any{"type": "object", "required": []string{"name"}, "additionalProperties": true},
			"state_action":  map[string]any{"args": []string{"state"}},
			"delete_action": map[string]any{"name": "delete", "args": []string{"delete"}},
		})
		return
	}
	name, _ := req.Config["name"].(string)
	if name == "" || strings.ContainsAny(name, "/\\") {
		fail("config.name %q", name)
	}
	want := map[string]any{}
	for k, v := range req.Config {
		want[k] = v
	}
	if strings.HasSuffix(req.Type, "-disk") {
		want["zone"] = os.Getenv("CLOUDSIM_ZONE")
	}
	path := filepath.Join(os.Getenv("CLOUDSIM_DIR"), name+".json")
	switch phase {
	case "state":
		raw, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			emit(map[string]any{"status": "STALE", "actions": []any{map[string]any{"name": "create", "description": "create " + name, "args": []string{"apply"}}}})
			return
		case err != nil:
			fail("state: %v", err)
		}
		var have map[string]any
		if err := json.Unmarshal(raw, &have); err != nil {
			fail("state: %v", err)
		}
		if reflect.DeepEqual(have, normalize(want)) {
			emit(map[string]any{"status": "VALID", "state": have})
			return
		}
		emit(map[string]any{"status": "STALE", "staleState": have, "actions": []any{map[string]any{"name": "update", "args": []string{"apply"}}}})
	case "apply":
		raw, _ := json.Marshal(want)
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			fail("apply: %v", err)
		}
		fmt.Println("wrote", path)
	case "delete":
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fail("delete: %v", err)
		}
	default:
		fail("unknown phase %q", phase)
	}
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
	fmt.Fprintf(os.Stderr, "cloudsim: "+format+"\n", args...)
	os.Exit(1)
}
