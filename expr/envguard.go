package expr

import (
	"fmt"
	"strings"
	"text/template/parse"
)

// ReservedEnvPrefix starts the names of Cairn's own settings (the API
// token, the codec key, the database URL, secrets as CAIRN_SECRET_<KEY>):
// documents may not read them, with envRef or with env.
const ReservedEnvPrefix = "CAIRN_"

// CheckEnvKey refuses an environment variable documents may not read:
// any name that starts with CAIRN_, in any case.
func CheckEnvKey(key string) error {
	if len(key) >= len(ReservedEnvPrefix) && strings.EqualFold(key[:len(ReservedEnvPrefix)], ReservedEnvPrefix) {
		return fmt.Errorf("env %q is refused: %s* variables are Cairn's own settings and cannot be read by documents", key, ReservedEnvPrefix)
	}
	return nil
}

// checkTreeEnv refuses a template whose env calls name a reserved
// variable literally, so validation reports it; names computed at run time
// are refused when the template runs.
func checkTreeEnv(root parse.Node) error {
	var bad error
	walk(root, func(n parse.Node) {
		if cmd, ok := n.(*parse.CommandNode); ok && bad == nil {
			if key, ok := envCall(cmd); ok {
				bad = CheckEnvKey(key)
			}
		}
	})
	return bad
}
