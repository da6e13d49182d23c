package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// chooseType picks the graph type of a command given no --type, as fuel2
// does: the one type the documents declare; when they declare none,
// "default" once the user confirms it on stdin (or gave --yes); several
// types are an error. what names the action for the question ("upload").
func chooseType(a *app, declared []string, yes bool, what string) (string, error) {
	switch len(declared) {
	case 1:
		return declared[0], nil
	case 0:
	default:
		return "", fmt.Errorf("the documents declare graph types %s: give --type", strings.Join(declared, ", "))
	}
	if yes {
		return model.DefaultGraphType, nil
	}
	fmt.Fprintf(a.stderr, "No graph type given (--type) or declared in the documents: %s as type %q? [y/N] ", what, model.DefaultGraphType)
	line := ""
	if a.stdin != nil {
		line, _ = bufio.NewReader(a.stdin).ReadString('\n')
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return model.DefaultGraphType, nil
	}
	fmt.Fprintln(a.stderr)
	return "", fmt.Errorf("not confirmed: give --type TYPE, or --yes to %s as type %q", what, model.DefaultGraphType)
}
