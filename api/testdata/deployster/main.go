// Command deployster is a Deployster protocol plugin for the tests: it
// keeps each resource as a JSON file in its config's dir, appends every
// state request it gets to NAME.requests, and prints from its create
// action what it was given (a secret among it, which Cairn redacts).
// With --plug it requires the plug "creds".
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
)

type request struct {
	Name    string         `json:"name"`
	Verbose bool           `json:"verbose"`
	Config  map[string]any `json:"config"`
}

func main() {
	raw, err := readAll()
	if err != nil {
		fail(err)
	}
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		fail(err)
	}
	args := slices.DeleteFunc(slices.Clone(os.Args[1:]), func(a string) bool { return a == "--plug" })
	mode := ""
	if len(args) > 0 {
		mode = args[len(args)-1]
	}
	dir, _ := req.Config["dir"].(string)
	file := filepath.Join(dir, req.Name+".json")
	switch mode {
	case "":
		init := map[string]any{
			"config_schema": map[string]any{
				"type": "object", "required": []any{"dir"},
				"properties": map[string]any{"dir": map[string]any{"type": "string"}, "size": map[string]any{"type": "integer"}},
			},
			"state_action":  map[string]any{"args": []any{"state"}},
			"delete_action": map[string]any{"args": []any{"delete"}},
		}
		if slices.Contains(os.Args[1:], "--plug") {
			init["plugs"] = map[string]any{"creds": map[string]any{"optional": false}}
		}
		emit(init)
	case "state":
		appendLine(filepath.Join(dir, req.Name+".requests"), raw)
		stored, err := os.ReadFile(file)
		if err == nil {
			var have map[string]any
			if json.Unmarshal(stored, &have) == nil && reflect.DeepEqual(have["config"], req.Config) {
				emit(map[string]any{"status": "VALID", "state": have["state"]})
				return
			}
		}
		emit(map[string]any{"status": "STALE", "actions": []any{map[string]any{"name": "create", "args": []any{"create"}}}})
	case "create":
		zone, _ := req.Config["zone"].(string)
		if zone == "" {
			zone = "europe-west1-b"
		}
		state := map[string]any{"name": req.Name, "zone": zone}
		out, _ := json.Marshal(map[string]any{"config": req.Config, "state": state})
		if err := os.WriteFile(file, out, 0o644); err != nil {
			fail(err)
		}
		fmt.Printf("creating %s in %s with password %v\n", req.Name, zone, req.Config["password"])
		fmt.Fprintf(os.Stderr, "created %s (verbose %t)\n", req.Name, req.Verbose)
	case "delete":
		_ = os.Remove(file)
	default:
		fail(fmt.Errorf("unknown mode %q", mode))
	}
}

func readAll() ([]byte, error) {
	var buf []byte
	chunk := make([]byte, 4096)
	for {
		n, err := os.Stdin.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			return buf, nil
		}
	}
}

func appendLine(path string, line []byte) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	_, _ = f.Write(append(slices.Clone(line), '\n'))
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
