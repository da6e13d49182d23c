// Package config is Cairn's configuration: every setting has a CAIRN_*
// environment variable and a flag of the same meaning. The table of
// variables is data, so the docs, `cairn server --help` and the check of
// docker-compose.yml all read the same names.
package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-io/cairn/contract"
)

// Var describes one setting.
type Var struct {
	Name    string // environment variable
	Flag    string // command-line flag
	Default string
	Usage   string
}

// Vars lists every setting Cairn reads.
var Vars = append([]Var{
	{"CAIRN_TEMPORAL_ADDRESS", "temporal-address", "127.0.0.1:7233", "Temporal frontend host:port"},
	{"CAIRN_TEMPORAL_NAMESPACE", "temporal-namespace", "default", "Temporal namespace"},
	{"CAIRN_TEMPORAL_TLS", "temporal-tls", "", "TLS to Temporal: true or false (default: on when a TLS file, server name or API key is set)"},
	{"CAIRN_TEMPORAL_TLS_CA", "temporal-tls-ca", "", "PEM file of the CAs that sign Temporal's server certificate (default: the system's)"},
	{"CAIRN_TEMPORAL_TLS_CERT", "temporal-tls-cert", "", "PEM client certificate for mutual TLS with Temporal (re-read when it changes)"},
	{"CAIRN_TEMPORAL_TLS_KEY", "temporal-tls-key", "", "PEM private key of the client certificate"},
	{"CAIRN_TEMPORAL_TLS_SERVER_NAME", "temporal-tls-server-name", "", "name Temporal's certificate must carry (default: the host of the address)"},
	{"CAIRN_TEMPORAL_API_KEY", "temporal-api-key", "", "API key sent to Temporal as a bearer token (prefer the variable or the _FILE setting to the flag)"},
	{"CAIRN_TEMPORAL_API_KEY_FILE", "temporal-api-key-file", "", "file holding the API key sent to Temporal"},
	{"CAIRN_TASK_QUEUE", "task-queue", "cairn", "task queue of the server's worker (the control plane)"},
	{"CAIRN_TEMPORAL_UI_URL", "temporal-ui-url", "http://127.0.0.1:8233", "base URL of the Temporal UI, for links"},
	{"CAIRN_DATA_DIR", "data-dir", ".data", "directory for the SQLite database and local nodes' roots"},
	{"CAIRN_DATABASE_URL", "database-url", "", "postgres://… for PostgreSQL; empty for SQLite in the data dir"},
	{"CAIRN_API_ADDR", "api-addr", "127.0.0.1:8080", "HTTP API listen address"},
	{"CAIRN_API_TOKEN", "api-token", "", "bearer token required by the API (required to listen beyond loopback)"},
	{"CAIRN_API_TOKENS", "api-tokens", "", "named bearer tokens (name:token, comma-separated); the name is recorded as who approved a plan"},
	{"CAIRN_BODY_LIMIT", "body-limit", "10MB", "largest request body the API accepts"},
	{"CAIRN_UPLOAD_MAX_BYTES", "upload-max-bytes", "64MiB", "largest package sent in parts (an upload), all its parts' bodies together"},
	{"CAIRN_UPLOAD_QUOTA", "upload-quota", "256MiB", "most bytes every open upload together may hold (uploads not yet used nor expired)"},
	{"CAIRN_UPLOAD_TTL", "upload-ttl", "1h", "how long an upload lives after its last part, unless an apply or dry-run uses it"},
	{"CAIRN_ALLOWED_ORIGINS", "allowed-origins", "", "browser origins (scheme://host:port, comma-separated) allowed to call the API across origins"},
	{"CAIRN_CODEC_ORIGINS", "codec-origins", "http://127.0.0.1:8233,http://localhost:8233", "the Temporal UI's origins, allowed to call the codec endpoint /codec"},
	{"CAIRN_CODEC_BODY_LIMIT", "codec-body-limit", "4MiB", "largest request body the codec endpoint accepts"},
	{"CAIRN_CODEC_KEY", "codec-key", "", "AES-256 key (hex or base64) sealing workflow payloads and stored states"},
	{"CAIRN_SECRETS_FILE", "secrets-file", "", "YAML or JSON file of secrets for secretRef (CAIRN_SECRET_<KEY> works too)"},
	{"CAIRN_KINDS_DIR", "kinds-dir", "", "directory of kind definitions (kind: Kind documents)"},
	{"CAIRN_FETCH_SCHEMES", "fetch-schemes", "https,http,file", "URL schemes a stack's package URLs may use"},
	{"CAIRN_FETCH_DIR", "fetch-dir", "", "directory file:// package URLs are confined to (empty: file URLs refused)"},
	{"CAIRN_CONTROL_ROOT", "control-root", "", "confine the control plane's paths to this directory (empty: absolute paths as given)"},
	{"CAIRN_FILES_DIR", "files-dir", "", "directory copy_files tasks read their sources from on the control plane (empty: copy_files refused)"},
	{"CAIRN_FILES_LIMIT", "files-limit", "4MiB", "most bytes one copy_files step may read on the control plane, all its files together"},
	{"CAIRN_PLUGS_DIR", "plugs-dir", "", "directory of the plugs external programs ask for, one subdirectory each (empty: a required plug is refused)"},
	{"CAIRN_HOOKS_ALLOW_PRIVATE", "hooks-allow-private", "false", "true lets webhooks reach loopback, private and link-local addresses (refused by default, checked on the address dialled)"},
	{"CAIRN_SYSTEMD_ADDRESS", "systemd-address", "", "D-Bus address of the systemd manager service resources drive and are watched on (empty: the system manager, /run/systemd/private)"},
	{"CAIRN_PACKAGE_MANAGER", "package-manager", "auto", "what the package kind drives: apt (apt-get, dpkg), dnf (dnf, rpm) or auto (apt where apt-get and dpkg-query are found, else dnf where dnf and rpm are)"},
	{"CAIRN_REBOOT_COMMAND", "reboot-command", "shutdown -r now", "agent: the command a reboot task runs (sh -c) before it waits for the agent to come back"},
	{"CAIRN_HOOK_MOVE_TO_BOOTSTRAP", "hook-move-to-bootstrap", "", "command (sh -c, on the control plane) run for each node of a move_to_bootstrap task"},
	{"CAIRN_HOOK_ERASE_NODE", "hook-erase-node", "", "command (sh -c, on the control plane) run for each node of an erase_node task"},
	{"CAIRN_HOOK_COBBLER_SYNC", "hook-cobbler-sync", "", "command (sh -c, on the control plane) run for each node of a cobbler_sync task"},
	{"CAIRN_BEFORE_STATE_LIMIT", "before-state-limit", "8MiB", "largest before-state of one step kept for rollback; a larger one is not kept and the step has no byte-exact rollback"},
	{"CAIRN_STEP_DATA_RETENTION", "step-data-retention", "7d", "how long an execution's step data (before-states, outputs, plans) is kept after it closed"},
	{"CAIRN_AUDIT_RETENTION", "audit-retention", "365d", "how long entries of the audit trail (GET /v1/audit) are kept"},
	{"CAIRN_OIDC_ISSUER", "oidc-issuer", "", "an OIDC issuer URL whose ID tokens the API accepts as bearer tokens (empty: none)"},
	{"CAIRN_OIDC_AUDIENCE", "oidc-audience", "", "the client id the issuer's ID tokens must be issued for"},
	{"CAIRN_OIDC_GROUPS", "oidc-groups", "", "JSON map of an ID token's groups to grants: {\"ops\": [{\"role\": \"deployer\", \"selector\": \"env=prod\"}]}"},
	{"CAIRN_OIDC_NAME_CLAIM", "oidc-name-claim", "email", "the ID token claim naming the principal (oidc:NAME; sub when absent)"},
	{"CAIRN_OIDC_GROUPS_CLAIM", "oidc-groups-claim", "groups", "the ID token claim listing its groups"},
	{"CAIRN_PARALLELISM", "parallelism", strconv.Itoa(contract.DefaultParallelism), "default units (activities) in flight per execution"},
	{"CAIRN_WORKER_POLLERS", "worker-pollers", "8", "workflow and activity task pollers of the control plane's worker"},
	{"CAIRN_NODE_POLLERS", "node-pollers", "1", "activity task pollers per node worker (each local node, each agent): a fleet holds nodes × this many long polls"},
	{"CAIRN_EVENTS_MAX_EXECUTIONS", "events-max-executions", "32", "executions whose event streams are followed at once (one follower each, whatever its clients); a stream of one more gets 503"},
	{"CAIRN_EVENTS_MAX_CLIENTS", "events-max-clients", "100", "event-stream clients of one execution; one more gets 429"},
	{"CAIRN_NODE_WAIT", "node-wait", "2m", "how long a step waits for its node's worker (a local node's, an agent) to take it before the execution fails with \"node N has no agent polling\""},
	{"CAIRN_WORKER_DRAIN", "worker-drain", "10s", "on SIGTERM: how long steps in flight may finish before they are handed to another worker"},
	{"CAIRN_CLUSTER", "cluster", "", "agent: the cluster this node belongs to"},
	{"CAIRN_NODE", "node", "", "agent: the node this agent serves"},
	{"CAIRN_NODE_ROOT", "node-root", "", "agent: confine the node's paths to this directory (empty: the host's filesystem)"},
	{"CAIRN_NODE_TOKEN", "node-token", "", "agent: the node's credential for the server's agent API (POST /v1/clusters/{id}/nodes/{node}/token)"},
	{"CAIRN_SERVER", "server", "http://127.0.0.1:8080", "CLI and agent: base URL of the Cairn API"},
	{"CAIRN_MEMORY_LIMIT", "memory-limit", DefaultMemoryLimit, "soft limit of the server's Go memory: near it garbage is collected sooner and memory handed back to the system (off: none; GOMEMLIMIT, when set, wins)"},
	{"CAIRN_DEBUG_ADDR", "debug-addr", "", "loopback address (127.0.0.1:PORT) serving Go's runtime profiles at /debug/pprof/ (empty: none)"},
	{"CAIRN_LOG_LEVEL", "log-level", "info", "debug, info, warn or error"},
	{"CAIRN_LOG_FORMAT", "log-format", "", "json or text (default: text on a terminal, json otherwise)"},
}, apiTLSVars...)

// Lookup finds a variable by environment name.
func Lookup(name string) (Var, bool) {
	for _, v := range Vars {
		if v.Name == name {
			return v, true
		}
	}
	return Var{}, false
}

// Config is the resolved configuration.
type Config struct {
	TemporalAddress   string
	TemporalNamespace string
	TaskQueue         string
	TemporalUIURL     string
	DataDir           string
	DatabaseURL       string
	APIAddr           string
	APIToken          string
	// APITokens are named bearer tokens, by name (CAIRN_API_TOKENS).
	APITokens map[string]string
	// OIDC, when set, is the identity provider whose ID tokens the API
	// accepts (oidc.go).
	OIDC      *OIDC
	BodyLimit int64
	// UploadMaxBytes, UploadQuota and UploadTTL bound packages sent in
	// parts.
	UploadMaxBytes   int64
	UploadQuota      int64
	UploadTTL        time.Duration
	AllowedOrigins   []string
	CodecOrigins     []string
	CodecBodyLimit   int64
	CodecKey         string
	SecretsFile      string
	KindsDir         string
	FetchSchemes     []string
	FetchDir         string
	ControlRoot      string
	Parallelism      int
	BeforeStateLimit int
	// FilesDir confines copy_files sources; FilesLimit bounds one step's.
	FilesDir   string
	FilesLimit int64
	// HooksAllowPrivate lets webhooks reach private addresses.
	HooksAllowPrivate bool
	// RebootCommand is what an agent's reboot task runs.
	RebootCommand string
	// SystemdAddress is the D-Bus address of the systemd manager the
	// service kind drives and watches ("": the system manager).
	SystemdAddress string
	// PackageManager is what the package kind drives: auto, apt or dnf.
	PackageManager string
	// PlugsDir holds the plugs external programs ask for (PlugsDir/NAME).
	PlugsDir string
	// Hooks maps each configured provisioning hook (erase_node) to its
	// command.
	Hooks             map[string]string
	StepDataRetention time.Duration
	// AuditRetention is how long audit entries are kept.
	AuditRetention time.Duration
	WorkerPollers  int
	NodePollers    int
	NodeWait       time.Duration
	WorkerDrain    time.Duration
	// EventsMaxExecutions and EventsMaxClients bound the event streams.
	EventsMaxExecutions int
	EventsMaxClients    int
	Cluster             string
	Node                string
	NodeRoot            string
	NodeToken           string
	Server              string
	LogLevel            string
	LogFormat           string
	// MemoryLimit is the soft limit of the server's Go memory in bytes
	// (0: none); see memlimit.go.
	MemoryLimit int64
	// DebugAddr serves the runtime's profiles (loopback only).
	DebugAddr       string
	ShutdownTimeout time.Duration

	// Temporal is how the connection to Temporal is secured.
	Temporal TemporalSecurity
	// APITLS is how the API is served over TLS and reached.
	APITLS APITLS
}

// Values maps each variable to its value: the environment (through
// getenv) over the defaults.
func Values(getenv func(string) string) map[string]string {
	if getenv == nil {
		getenv = os.Getenv
	}
	out := make(map[string]string, len(Vars))
	for _, v := range Vars {
		out[v.Name] = v.Default
		if s := getenv(v.Name); s != "" {
			out[v.Name] = s
		}
	}
	return out
}

// Load resolves a Config from values keyed by variable name (see Values;
// flags override entries before calling Load).
func Load(vals map[string]string) (*Config, error) {
	c := &Config{
		TemporalAddress:   vals["CAIRN_TEMPORAL_ADDRESS"],
		TemporalNamespace: vals["CAIRN_TEMPORAL_NAMESPACE"],
		TaskQueue:         vals["CAIRN_TASK_QUEUE"],
		TemporalUIURL:     strings.TrimRight(vals["CAIRN_TEMPORAL_UI_URL"], "/"),
		DataDir:           vals["CAIRN_DATA_DIR"],
		DatabaseURL:       vals["CAIRN_DATABASE_URL"],
		APIAddr:           vals["CAIRN_API_ADDR"],
		APIToken:          vals["CAIRN_API_TOKEN"],
		CodecKey:          vals["CAIRN_CODEC_KEY"],
		SecretsFile:       vals["CAIRN_SECRETS_FILE"],
		KindsDir:          vals["CAIRN_KINDS_DIR"],
		FetchDir:          vals["CAIRN_FETCH_DIR"],
		ControlRoot:       vals["CAIRN_CONTROL_ROOT"],
		FilesDir:          vals["CAIRN_FILES_DIR"],
		RebootCommand:     vals["CAIRN_REBOOT_COMMAND"],
		SystemdAddress:    vals["CAIRN_SYSTEMD_ADDRESS"],
		PlugsDir:          vals["CAIRN_PLUGS_DIR"],
		Hooks:             HookCommands(vals),
		Cluster:           vals["CAIRN_CLUSTER"],
		Node:              vals["CAIRN_NODE"],
		NodeRoot:          vals["CAIRN_NODE_ROOT"],
		NodeToken:         vals["CAIRN_NODE_TOKEN"],
		Server:            strings.TrimRight(vals["CAIRN_SERVER"], "/"),
		LogLevel:          vals["CAIRN_LOG_LEVEL"],
		DebugAddr:         vals["CAIRN_DEBUG_ADDR"],
		LogFormat:         vals["CAIRN_LOG_FORMAT"],
		ShutdownTimeout:   10 * time.Second,
	}
	var err error
	if c.APITokens, err = ParseNamedTokens(vals["CAIRN_API_TOKENS"]); err != nil {
		return nil, fmt.Errorf("CAIRN_API_TOKENS: %w", err)
	}
	if c.OIDC, err = loadOIDC(vals); err != nil {
		return nil, err
	}
	if c.Temporal, err = loadTemporalSecurity(vals); err != nil {
		return nil, err
	}
	if c.APITLS, err = loadAPITLS(vals); err != nil {
		return nil, err
	}
	if c.MemoryLimit, err = parseMemoryLimit(vals["CAIRN_MEMORY_LIMIT"]); err != nil {
		return nil, fmt.Errorf("CAIRN_MEMORY_LIMIT: %w", err)
	}
	if c.BodyLimit, err = ParseSize(vals["CAIRN_BODY_LIMIT"]); err != nil {
		return nil, fmt.Errorf("CAIRN_BODY_LIMIT: %w", err)
	}
	if c.UploadMaxBytes, err = ParseSize(vals["CAIRN_UPLOAD_MAX_BYTES"]); err != nil || c.UploadMaxBytes <= 0 {
		return nil, fmt.Errorf("CAIRN_UPLOAD_MAX_BYTES: want a positive size such as 64MiB, got %q", vals["CAIRN_UPLOAD_MAX_BYTES"])
	}
	if c.UploadQuota, err = ParseSize(vals["CAIRN_UPLOAD_QUOTA"]); err != nil || c.UploadQuota < c.UploadMaxBytes {
		return nil, fmt.Errorf("CAIRN_UPLOAD_QUOTA: want a size at least CAIRN_UPLOAD_MAX_BYTES (%d bytes), got %q", c.UploadMaxBytes, vals["CAIRN_UPLOAD_QUOTA"])
	}
	if c.UploadTTL, err = time.ParseDuration(vals["CAIRN_UPLOAD_TTL"]); err != nil || c.UploadTTL <= 0 {
		return nil, fmt.Errorf("CAIRN_UPLOAD_TTL: want a positive duration such as 1h, got %q", vals["CAIRN_UPLOAD_TTL"])
	}
	limit, err := ParseSize(vals["CAIRN_BEFORE_STATE_LIMIT"])
	if err != nil || limit > maxBeforeStateLimit {
		return nil, fmt.Errorf("CAIRN_BEFORE_STATE_LIMIT: want a size up to 1GiB, got %q", vals["CAIRN_BEFORE_STATE_LIMIT"])
	}
	c.BeforeStateLimit = int(limit)
	if c.FilesLimit, err = ParseSize(vals["CAIRN_FILES_LIMIT"]); err != nil || c.FilesLimit <= 0 || c.FilesLimit > maxBeforeStateLimit {
		return nil, fmt.Errorf("CAIRN_FILES_LIMIT: want a size up to 1GiB, got %q", vals["CAIRN_FILES_LIMIT"])
	}
	if c.StepDataRetention, err = ParseDays(vals["CAIRN_STEP_DATA_RETENTION"]); err != nil {
		return nil, fmt.Errorf("CAIRN_STEP_DATA_RETENTION: %w", err)
	}
	if c.AuditRetention, err = ParseDays(vals["CAIRN_AUDIT_RETENTION"]); err != nil {
		return nil, fmt.Errorf("CAIRN_AUDIT_RETENTION: %w", err)
	}
	if c.Parallelism, err = positive(vals["CAIRN_PARALLELISM"]); err != nil {
		return nil, fmt.Errorf("CAIRN_PARALLELISM: %w", err)
	}
	if c.WorkerPollers, err = positive(vals["CAIRN_WORKER_POLLERS"]); err != nil {
		return nil, fmt.Errorf("CAIRN_WORKER_POLLERS: %w", err)
	}
	if c.NodePollers, err = positive(vals["CAIRN_NODE_POLLERS"]); err != nil {
		return nil, fmt.Errorf("CAIRN_NODE_POLLERS: %w", err)
	}
	if c.EventsMaxExecutions, err = positive(vals["CAIRN_EVENTS_MAX_EXECUTIONS"]); err != nil {
		return nil, fmt.Errorf("CAIRN_EVENTS_MAX_EXECUTIONS: %w", err)
	}
	if c.EventsMaxClients, err = positive(vals["CAIRN_EVENTS_MAX_CLIENTS"]); err != nil {
		return nil, fmt.Errorf("CAIRN_EVENTS_MAX_CLIENTS: %w", err)
	}
	if c.NodeWait, err = time.ParseDuration(vals["CAIRN_NODE_WAIT"]); err != nil || c.NodeWait <= 0 {
		return nil, fmt.Errorf("CAIRN_NODE_WAIT: want a positive duration such as 2m, got %q", vals["CAIRN_NODE_WAIT"])
	}
	if c.WorkerDrain, err = time.ParseDuration(vals["CAIRN_WORKER_DRAIN"]); err != nil || c.WorkerDrain <= 0 {
		return nil, fmt.Errorf("CAIRN_WORKER_DRAIN: want a positive duration such as 10s, got %q", vals["CAIRN_WORKER_DRAIN"])
	}
	if c.HooksAllowPrivate, err = strconv.ParseBool(vals["CAIRN_HOOKS_ALLOW_PRIVATE"]); err != nil {
		return nil, fmt.Errorf("CAIRN_HOOKS_ALLOW_PRIVATE: want true or false, got %q", vals["CAIRN_HOOKS_ALLOW_PRIVATE"])
	}
	if c.PackageManager, err = loadPackageManager(vals); err != nil {
		return nil, err
	}
	if c.CodecBodyLimit, err = ParseSize(vals["CAIRN_CODEC_BODY_LIMIT"]); err != nil {
		return nil, fmt.Errorf("CAIRN_CODEC_BODY_LIMIT: %w", err)
	}
	for _, s := range strings.Split(vals["CAIRN_FETCH_SCHEMES"], ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.FetchSchemes = append(c.FetchSchemes, strings.ToLower(s))
		}
	}
	c.AllowedOrigins = list(vals["CAIRN_ALLOWED_ORIGINS"])
	c.CodecOrigins = list(vals["CAIRN_CODEC_ORIGINS"])
	for _, dir := range []*string{&c.DataDir, &c.ControlRoot, &c.FetchDir, &c.NodeRoot, &c.FilesDir} {
		if *dir != "" {
			if abs, err := filepath.Abs(*dir); err == nil {
				*dir = abs
			}
		}
	}
	if _, _, err := net.SplitHostPort(c.APIAddr); err != nil {
		return nil, fmt.Errorf("CAIRN_API_ADDR %q: %w", c.APIAddr, err)
	}
	return c, nil
}

// hookVars maps each provisioning hook to its setting.
var hookVars = [...][2]string{
	{"move_to_bootstrap", "CAIRN_HOOK_MOVE_TO_BOOTSTRAP"},
	{"erase_node", "CAIRN_HOOK_ERASE_NODE"},
	{"cobbler_sync", "CAIRN_HOOK_COBBLER_SYNC"},
}

// HookCommands reads the provisioning hooks' commands from values keyed
// by variable name (see Values): hook name → command, configured ones only.
func HookCommands(vals map[string]string) map[string]string {
	out := map[string]string{}
	for _, h := range hookVars {
		if cmd := strings.TrimSpace(vals[h[1]]); cmd != "" {
			out[h[0]] = cmd
		}
	}
	return out
}

// HookNames lists the configured hooks of c, sorted.
func (c *Config) HookNames() []string {
	out := make([]string, 0, len(c.Hooks))
	for _, h := range hookVars {
		if _, ok := c.Hooks[h[0]]; ok {
			out = append(out, h[0])
		}
	}
	return out
}

// list splits a comma-separated value, dropping empty items; nil when
// nothing is left.
func list(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func positive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive integer, got %q", s)
	}
	return n, nil
}

// maxBeforeStateLimit bounds CAIRN_BEFORE_STATE_LIMIT: a before-state is
// held in memory and written in one statement.
const maxBeforeStateLimit = 1 << 30

// ParseDays reads a positive duration: Go's form ("36h", "90m") or whole
// days ("7d").
func ParseDays(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, fmt.Errorf("want a duration like 7d or 36h, got %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a duration like 7d or 36h, got %q", s)
	}
	return d, nil
}

// ParseSize reads "10MB", "512KiB", "1048576".
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a size like 10MB, got %q", s)
	}
	return n * mult, nil
}

// ParseNamedTokens reads "name:token,name:token": names are letters,
// digits and ".-_@", unique; tokens non-empty and unique. Errors never
// quote a token.
func ParseNamedTokens(s string) (map[string]string, error) {
	out := map[string]string{}
	seen := map[string]bool{}
	for i, entry := range list(s) {
		name, token, ok := strings.Cut(entry, ":")
		name, token = strings.TrimSpace(name), strings.TrimSpace(token)
		if !ok || name == "" || token == "" {
			return nil, fmt.Errorf("entry %d: want name:token", i+1)
		}
		if strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_@") != "" {
			return nil, fmt.Errorf("entry %d: name %q: use letters, digits and .-_@", i+1, name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("entry %d: name %q given twice", i+1, name)
		}
		if seen[token] {
			return nil, fmt.Errorf("entry %d (%s): the token is another name's too", i+1, name)
		}
		out[name], seen[token] = token, true
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
