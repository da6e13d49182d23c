package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// storeParams keeps an execution's parameters in the store, sealed, under
// a random name the workflow carries instead of the values; "" when there
// are none. Secrets are refused by a store that does not seal: they are
// never stored in clear.
func (s *server) storeParams(ctx context.Context, p model.ApplyParams) (string, error) {
	if p.Empty() {
		return "", nil
	}
	if err := s.checkSecretsSealed(p); err != nil {
		return "", err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", internalError(fmt.Errorf("parameters name: %w", err))
	}
	ref := hex.EncodeToString(b[:])
	data, err := json.Marshal(p)
	if err != nil {
		return "", internalError(fmt.Errorf("encode parameters: %w", err))
	}
	if err := s.store.PutStepData(ctx, contract.ParamsExecution(ref), contract.ParamsKey, contract.DataParams, data); err != nil {
		return "", storeError(err, "parameters")
	}
	return ref, nil
}

// checkSecretsSealed refuses secrets a store that does not seal would keep
// in clear.
func (s *server) checkSecretsSealed(p model.ApplyParams) error {
	if len(p.Secrets) > 0 && !store.Sealed(s.store) {
		return invalid("secrets cannot be given with an apply", []model.ErrorDetail{{Document: requestSource, Path: "secrets",
			Message: "this server keeps no secrets: it has no CAIRN_CODEC_KEY to seal them with; set one, or give secrets in the server's secrets file"}})
	}
	return nil
}

// missingRefs lists the env and secret refs of docs' package that need a
// value and have none: not in p, nor in the server's environment or
// secrets.
func (s *server) missingRefs(docs *graphs.Documents, p model.ApplyParams) (env, secrets []string) {
	needEnv, needSecrets := docs.RequiredRefs()
	return s.missingOf(needEnv, needSecrets, p)
}

// missingOf lists the env refs and secrets of needEnv and needSecrets that
// neither p nor the server has a value for.
func (s *server) missingOf(needEnv, needSecrets []string, p model.ApplyParams) (env, secrets []string) {
	for _, k := range needEnv {
		if _, ok := p.EnvRefs[k]; ok {
			continue
		}
		if _, ok := s.env(k); !ok {
			env = append(env, k)
		}
	}
	for _, k := range needSecrets {
		if _, ok := p.Secrets[k]; ok {
			continue
		}
		if _, ok := s.secrets.Lookup(k); !ok {
			secrets = append(secrets, k)
		}
	}
	return env, secrets
}

// errMissingRefs is the 422 of an apply whose package refers to values it
// was not given, naming each.
func errMissingRefs(env, secrets, vars []string) *Error {
	var details []model.ErrorDetail
	for _, k := range env {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "envRefs." + k,
			Message: fmt.Sprintf("env ref %q has no value: give it with the apply (envRefs) or in the server's environment", k)})
	}
	for _, k := range secrets {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "secrets." + k,
			Message: fmt.Sprintf("secret %q has no value: give it with the apply (secrets) or in the server's secrets", k)})
	}
	for _, k := range vars {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "vars." + k,
			Message: fmt.Sprintf("variable %q has no value: give it with the apply (vars, or the CLI's --var/--var-file)", k)})
	}
	return &Error{Status: http.StatusUnprocessableEntity, Message: fmt.Sprintf("the package refers to %d value(s) it was not given", len(details)),
		Details: details, Extra: map[string]any{"missingEnvRefs": nonNilStrings(env), "missingSecrets": nonNilStrings(secrets), "missingVars": nonNilStrings(vars)}}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// mergeSorted is the sorted union of a and b.
func mergeSorted(a, b []string) []string {
	set := map[string]bool{}
	for _, k := range a {
		set[k] = true
	}
	for _, k := range b {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// stackSecrets returns the secrets kept for a stack by its earlier applies;
// none when it has none or the store does not seal (then none were kept).
func (s *server) stackSecrets(ctx context.Context, stackID string) (map[string]string, error) {
	if !store.Sealed(s.store) {
		return nil, nil
	}
	data, err := s.store.GetStepData(ctx, contract.StackSecretsExecution(stackID), contract.ParamsKey, contract.DataParams)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(err, "the stack's secrets")
	}
	var p model.ApplyParams
	if err := json.Unmarshal(data, &p); err != nil {
		// The record holds secrets: say nothing of its bytes.
		return nil, internalError(fmt.Errorf("the secrets of stack %s do not decode", stackID))
	}
	return p.Secrets, nil
}

// keepStackSecrets stores a stack's secrets, sealed, for its later applies.
func (s *server) keepStackSecrets(ctx context.Context, stackID string, secrets map[string]string) error {
	if len(secrets) > maxParams {
		return invalid("the stack's secrets", []model.ErrorDetail{{Document: requestSource, Path: "secrets",
			Message: fmt.Sprintf("a stack keeps at most %d secrets, this apply would make %d", maxParams, len(secrets))}})
	}
	data, err := json.Marshal(model.ApplyParams{Secrets: secrets})
	if err != nil {
		return internalError(fmt.Errorf("encode the stack's secrets: %w", err))
	}
	if err := s.store.PutStepData(ctx, contract.StackSecretsExecution(stackID), contract.ParamsKey, contract.DataParams, data); err != nil {
		return storeError(err, "the stack's secrets")
	}
	return nil
}

// withStackSecrets is p with the stack's kept secrets under the given
// ones: a value given with the execution wins.
func withStackSecrets(p model.ApplyParams, kept map[string]string) model.ApplyParams {
	if len(kept) == 0 {
		return p
	}
	merged := make(map[string]string, len(kept)+len(p.Secrets))
	for k, v := range kept {
		merged[k] = v
	}
	for k, v := range p.Secrets {
		merged[k] = v
	}
	p.Secrets = merged
	return p
}
