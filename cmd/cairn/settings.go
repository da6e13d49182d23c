package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-io/cairn/internal/config"
)

// settingFlags gives cmd one flag per configuration variable named, and
// returns the loader of the resolved configuration: flags set on the
// command line over CAIRN_* variables over defaults.
func settingFlags(cmd *cobra.Command, names []string, aliases map[string]string) func() (*config.Config, error) {
	flagVals := map[string]*string{}
	byFlag := map[string]string{}
	fs := cmd.Flags()
	for _, name := range names {
		v, ok := config.Lookup(name)
		if !ok {
			panic("unknown setting " + name) // a programming error in the command table
		}
		val := new(string)
		flagVals[name] = val
		byFlag[v.Flag] = name
		fs.StringVar(val, v.Flag, "", fmt.Sprintf("%s (default $%s, else %q)", v.Usage, v.Name, v.Default))
	}
	for alias, name := range aliases {
		fs.StringVar(flagVals[name], alias, "", "same as --"+mustFlag(name))
		byFlag[alias] = name
	}
	return func() (*config.Config, error) {
		vals := config.Values(os.Getenv)
		fs.Visit(func(f *pflag.Flag) {
			if name, ok := byFlag[f.Name]; ok {
				vals[name] = *flagVals[name]
			}
		})
		return config.Load(vals)
	}
}

func mustFlag(name string) string {
	v, _ := config.Lookup(name)
	return v.Flag
}

// newLogger logs to the app's stderr at the configured level, as JSON when
// asked or when stderr is not a terminal.
func newLogger(a *app, cfg *config.Config) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	format := strings.ToLower(cfg.LogFormat)
	if format == "" {
		format = "json"
		if f, ok := a.stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
			format = "text"
		}
	}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(a.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(a.stderr, opts))
}
