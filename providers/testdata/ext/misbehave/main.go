// Command misbehave is an external provider that breaks the protocol in
// the way its first argument names, for tests of how such programs are
// reported. Other arguments are the phase (none is init).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: misbehave MODE [phase]")
		os.Exit(2)
	}
	mode := os.Args[1]
	phase := "init"
	if len(os.Args) > 2 {
		phase = os.Args[2]
	}
	_, _ = io.ReadAll(os.Stdin)

	if phase == "init" {
		switch mode {
		case "badjson-init":
			fmt.Println("Starting provider v1.2... {oops")
		case "two-values":
			fmt.Println(`{"state_action": {"args": ["state"]}} {"again": true}`)
		case "shape-init":
			fmt.Println(`{"state_action": {"args": "state"}}`)
		case "no-state-action":
			fmt.Println(`{"config_schema": {"type": "object"}}`)
		case "exit-init":
			fmt.Fprintln(os.Stderr, "fatal: cannot reach the cloud API")
			os.Exit(3)
		case "required-plug":
			emit(map[string]any{"plugs": map[string]any{"credentials": map[string]any{"container_path": "/creds"}}, "state_action": map[string]any{"args": []string{"state"}}})
		case "strict-schema":
			emit(map[string]any{
				"config_schema": map[string]any{
					"type":       "object",
					"required":   []string{"size"},
					"properties": map[string]any{"size": map[string]any{"type": "integer", "minimum": 1}},
				},
				"state_action": map[string]any{"args": []string{"state"}},
			})
		case "bad-config-schema":
			emit(map[string]any{"config_schema": map[string]any{"type": "no-such-type"}, "state_action": map[string]any{"args": []string{"state"}}})
		default:
			emit(map[string]any{"state_action": map[string]any{"args": []string{"state"}}})
		}
		return
	}
	switch phase {
	case "state":
		switch mode {
		case "badjson-state":
			fmt.Print(`{"status": "VALID", "state": {`)
		case "shape-state":
			emit(map[string]any{"status": "VALID", "state": map[string]any{"a": 1}, "actions": []any{map[string]any{"name": "x"}}})
		case "unknown-status":
			emit(map[string]any{"status": "MAYBE"})
		case "stale-no-actions":
			emit(map[string]any{"status": "STALE", "actions": []any{}})
		case "exit-state":
			fmt.Fprintln(os.Stderr, "state query failed: permission denied")
			os.Exit(2)
		case "always-stale":
			emit(map[string]any{"status": "STALE", "staleState": map[string]any{"n": 1}, "actions": []any{map[string]any{"name": "fix", "args": []string{"fix"}}}})
		case "exit-action":
			emit(map[string]any{"status": "STALE", "actions": []any{map[string]any{"name": "explode", "description": "blow up", "args": []string{"explode"}}}})
		case "sleep-state":
			// A child that would outlive us unless the process group dies.
			child := exec.Command("sleep", "1000")
			if err := child.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			if f := os.Getenv("EXT_PIDFILE"); f != "" {
				_ = os.WriteFile(f, []byte(fmt.Sprint(child.Process.Pid)), 0o644)
			}
			time.Sleep(time.Hour)
		default:
			emit(map[string]any{"status": "VALID", "state": map[string]any{"mode": mode}})
		}
	case "fix":
		fmt.Println("fixed (not really)")
	case "explode":
		fmt.Fprintln(os.Stderr, "explosion in sector 7")
		os.Exit(7)
	default:
		fmt.Fprintf(os.Stderr, "unknown phase %q\n", phase)
		os.Exit(2)
	}
}

func emit(v any) {
	_ = json.NewEncoder(os.Stdout).Encode(v)
}
