package config

import (
	"fmt"
	"strconv"
	"strings"
)

// TemporalSecurity is how Cairn's Temporal clients secure their connection:
// TLS (server verification, and a client certificate for mutual TLS) and an
// API key. The values are settings as given; internal/temporalclient checks
// them and reads the files.
type TemporalSecurity struct {
	// TLS forces TLS on (true) or off (false); nil means on when any TLS
	// setting or an API key is given.
	TLS *bool
	// CAFile is a PEM bundle of the CAs trusted to sign the server's
	// certificate; empty means the system's roots.
	CAFile string
	// CertFile and KeyFile are the client certificate and its key, both or
	// neither.
	CertFile string
	KeyFile  string
	// ServerName is the name the server's certificate must carry; empty
	// means the host of the Temporal address.
	ServerName string
	// APIKey is sent as "authorization: Bearer <key>"; it must never be
	// logged. APIKeyFile names a file holding it instead.
	APIKey     string
	APIKeyFile string
}

// String hides the API key, so a TemporalSecurity printed by mistake does
// not leak it.
func (s TemporalSecurity) String() string {
	key := ""
	if s.APIKey != "" {
		key = "[redacted]"
	}
	tls := "auto"
	if s.TLS != nil {
		tls = strconv.FormatBool(*s.TLS)
	}
	return fmt.Sprintf("{TLS:%s CAFile:%s CertFile:%s KeyFile:%s ServerName:%s APIKey:%s APIKeyFile:%s}",
		tls, s.CAFile, s.CertFile, s.KeyFile, s.ServerName, key, s.APIKeyFile)
}

// GoString hides the API key from %#v as String does from %v.
func (s TemporalSecurity) GoString() string { return "config.TemporalSecurity" + s.String() }

func loadTemporalSecurity(vals map[string]string) (TemporalSecurity, error) {
	s := TemporalSecurity{
		CAFile:     vals["CAIRN_TEMPORAL_TLS_CA"],
		CertFile:   vals["CAIRN_TEMPORAL_TLS_CERT"],
		KeyFile:    vals["CAIRN_TEMPORAL_TLS_KEY"],
		ServerName: vals["CAIRN_TEMPORAL_TLS_SERVER_NAME"],
		APIKey:     vals["CAIRN_TEMPORAL_API_KEY"],
		APIKeyFile: vals["CAIRN_TEMPORAL_API_KEY_FILE"],
	}
	if v := strings.TrimSpace(vals["CAIRN_TEMPORAL_TLS"]); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, fmt.Errorf("CAIRN_TEMPORAL_TLS: want true or false, got %q", v)
		}
		s.TLS = &b
	}
	return s, nil
}
