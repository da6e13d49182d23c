package config

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// OIDC is the identity provider whose ID tokens the API accepts
// (CAIRN_OIDC_*); nil without CAIRN_OIDC_ISSUER.
type OIDC struct {
	Issuer      string
	Audience    string
	NameClaim   string
	GroupsClaim string
	// Groups maps a group to its members' grants (CAIRN_OIDC_GROUPS, JSON:
	// {"group": [{"role": "deployer", "stacks": ["web"]}]}).
	Groups map[string][]model.Grant
}

// loadOIDC reads the CAIRN_OIDC_* settings.
func loadOIDC(vals map[string]string) (*OIDC, error) {
	if vals["CAIRN_OIDC_ISSUER"] == "" {
		return nil, nil
	}
	o := &OIDC{Issuer: vals["CAIRN_OIDC_ISSUER"], Audience: vals["CAIRN_OIDC_AUDIENCE"],
		NameClaim: vals["CAIRN_OIDC_NAME_CLAIM"], GroupsClaim: vals["CAIRN_OIDC_GROUPS_CLAIM"]}
	if o.Audience == "" {
		return nil, fmt.Errorf("CAIRN_OIDC_AUDIENCE: required with CAIRN_OIDC_ISSUER")
	}
	if g := vals["CAIRN_OIDC_GROUPS"]; g != "" {
		if err := json.Unmarshal([]byte(g), &o.Groups); err != nil {
			return nil, fmt.Errorf("CAIRN_OIDC_GROUPS: want JSON {\"group\": [{\"role\": …}]}: %w", err)
		}
	}
	return o, nil
}
