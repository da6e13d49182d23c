// Package platform is a small REST API shaped like the InfluxDB platform that
// pkger manages: labels, buckets, dashboards and tasks, with label mappings.
// Tests serve it with httptest and drive it through Cairn's http kind; it
// counts requests, can be told to fail, and exposes its state for exact
// comparisons.
package platform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// OrgID is the organization every object belongs to; the platform adds it
// to each object as a server-side field a spec never sets.
const OrgID = "0000000000000001"

// maxBody bounds request bodies.
const maxBody = 1 << 20

// Collections are the object collections the platform serves, under
// /api/v2/{collection}.
var collections = []string{"labels", "buckets", "dashboards", "tasks"}

// uniqueNames are the collections whose names are unique (409 on a clash),
// as on the real platform.
var uniqueNames = map[string]bool{"labels": true, "buckets": true}

// serverDefaults are fields the platform fills in when a create leaves them
// out, so clients see more than they sent.
var serverDefaults = map[string]map[string]any{
	"labels":     {"properties": map[string]any{}},
	"buckets":    {"description": "", "retentionRules": []any{}, "type": "user"},
	"dashboards": {"description": "", "cells": []any{}},
	"tasks":      {"description": "", "status": "active", "flux": ""},
}

// Fault makes matching requests fail. Method "" matches any method; Path
// matches the request path exactly, or as a prefix when it ends in "*".
// Times is how many requests fail before the fault is spent (0 = until
// ClearFaults). Status defaults to 500; Delay holds the answer back first
// (cut short when the client gives up).
type Fault struct {
	Method string
	Path   string
	Times  int
	Status int
	Body   string
	Delay  time.Duration
}

func (f *Fault) matches(r *http.Request) bool {
	if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
		return false
	}
	if prefix, ok := strings.CutSuffix(f.Path, "*"); ok {
		return strings.HasPrefix(r.URL.Path, prefix)
	}
	return f.Path == r.URL.Path
}

// Platform is the fake platform. It is an http.Handler and safe for
// concurrent use.
type Platform struct {
	mux *http.ServeMux

	mu       sync.Mutex
	token    string
	seq      int
	objects  map[string]map[string]map[string]any // collection → id → object
	order    map[string][]string                  // collection → ids in creation order
	mappings map[string]map[string][]string       // collection → id → label ids in mapping order
	counts   map[string]int                       // "METHOD path" → requests
	total    int
	writes   int
	faults   []*Fault
	reject   *regexp.Regexp
}

// New returns an empty platform without authentication.
func New() *Platform {
	p := &Platform{
		objects:  map[string]map[string]map[string]any{},
		order:    map[string][]string{},
		mappings: map[string]map[string][]string{},
		counts:   map[string]int{},
	}
	for _, c := range collections {
		p.objects[c] = map[string]map[string]any{}
		p.mappings[c] = map[string][]string{}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v2/{coll}", p.list)
	mux.HandleFunc("POST /api/v2/{coll}", p.create)
	mux.HandleFunc("GET /api/v2/{coll}/{id}", p.get)
	mux.HandleFunc("PATCH /api/v2/{coll}/{id}", p.update)
	mux.HandleFunc("PUT /api/v2/{coll}/{id}", p.update)
	mux.HandleFunc("DELETE /api/v2/{coll}/{id}", p.remove)
	mux.HandleFunc("GET /api/v2/{coll}/{id}/labels", p.listMappings)
	mux.HandleFunc("POST /api/v2/{coll}/{id}/labels", p.addMapping)
	mux.HandleFunc("DELETE /api/v2/{coll}/{id}/labels/{labelID}", p.removeMapping)
	p.mux = mux
	return p
}

// SetToken requires "Authorization: Bearer token" on every request; ""
// turns the check off.
func (p *Platform) SetToken(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.token = token
}

// Inject adds a fault.
func (p *Platform) Inject(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.Status == 0 {
		f.Status = http.StatusInternalServerError
	}
	p.faults = append(p.faults, &f)
}

// FailNext makes the next n requests with method on path answer 500.
func (p *Platform) FailNext(method, path string, n int) {
	p.Inject(Fault{Method: method, Path: path, Times: n})
}

// RejectNames makes creates and updates whose "name" matches pattern answer
// 422, as a platform validating names would; "" lifts the rule.
func (p *Platform) RejectNames(pattern string) error {
	var re *regexp.Regexp
	if pattern != "" {
		var err error
		if re, err = regexp.Compile(pattern); err != nil {
			return fmt.Errorf("reject pattern: %w", err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reject = re
	return nil
}

// ClearFaults removes every fault and name rule.
func (p *Platform) ClearFaults() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults, p.reject = nil, nil
}

// Requests counts the requests seen with method on path ("" method: any).
func (p *Platform) Requests(method, path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if method != "" {
		return p.counts[strings.ToUpper(method)+" "+path]
	}
	n := 0
	for k, v := range p.counts {
		if _, rest, _ := strings.Cut(k, " "); rest == path {
			n += v
		}
	}
	return n
}

// TotalRequests counts every request seen.
func (p *Platform) TotalRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}

// Writes counts the requests that were not GET (POST, PUT, PATCH, DELETE),
// whether or not they succeeded.
func (p *Platform) Writes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writes
}

// ResetCounters zeroes the request counters.
func (p *Platform) ResetCounters() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts, p.total, p.writes = map[string]int{}, 0, 0
}

// ServeHTTP counts the request, checks the token and faults, then routes it.
func (p *Platform) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.counts[r.Method+" "+r.URL.Path]++
	p.total++
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		p.writes++
	}
	if p.token != "" && r.Header.Get("Authorization") != "Bearer "+p.token {
		p.mu.Unlock()
		writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
		return
	}
	var fault *Fault
	for i, f := range p.faults {
		if f.matches(r) {
			fault = f
			if f.Times > 0 {
				if f.Times--; f.Times == 0 {
					p.faults = slices.Delete(p.faults, i, i+1)
				}
			}
			break
		}
	}
	p.mu.Unlock()

	if fault != nil {
		if fault.Delay > 0 {
			select {
			case <-time.After(fault.Delay):
			case <-r.Context().Done():
				return
			}
		}
		body := fault.Body
		if body == "" {
			body = fmt.Sprintf(`{"code":"internal error","message":"injected fault on %s %s"}`, r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(fault.Status)
		_, _ = io.WriteString(w, body)
		return
	}
	p.mux.ServeHTTP(w, r)
}

// --- handlers ---

func (p *Platform) collection(w http.ResponseWriter, r *http.Request) (string, bool) {
	coll := r.PathValue("coll")
	if !slices.Contains(collections, coll) {
		writeError(w, http.StatusNotFound, "not found", fmt.Sprintf("no collection %q", coll))
		return "", false
	}
	return coll, true
}

func (p *Platform) list(w http.ResponseWriter, r *http.Request) {
	coll, ok := p.collection(w, r)
	if !ok {
		return
	}
	name := r.URL.Query().Get("name")
	p.mu.Lock()
	items := []any{}
	for _, id := range p.order[coll] {
		obj := p.objects[coll][id]
		if name != "" && obj["name"] != name {
			continue
		}
		items = append(items, clone(obj))
	}
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{coll: items})
}

func (p *Platform) create(w http.ResponseWriter, r *http.Request) {
	coll, ok := p.collection(w, r)
	if !ok {
		return
	}
	obj, ok := readObject(w, r)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if status, code, msg := p.checkName(coll, "", obj); status != 0 {
		writeError(w, status, code, msg)
		return
	}
	p.insertLocked(coll, obj)
	writeJSON(w, http.StatusCreated, clone(obj))
}

// insertLocked stores obj, a new object of coll, under the next id, with
// the server's defaults for what it does not set and the org; it returns
// the id. p.mu is held.
func (p *Platform) insertLocked(coll string, obj map[string]any) string {
	p.seq++
	id := fmt.Sprintf("%016x", 0x0a00000000000000+p.seq)
	for k, v := range serverDefaults[coll] {
		if _, set := obj[k]; !set {
			obj[k] = clone(v)
		}
	}
	obj["id"], obj["orgID"] = id, OrgID
	p.objects[coll][id] = obj
	p.order[coll] = append(p.order[coll], id)
	return id
}

func (p *Platform) get(w http.ResponseWriter, r *http.Request) {
	coll, ok := p.collection(w, r)
	if !ok {
		return
	}
	p.mu.Lock()
	obj, found := p.objects[coll][r.PathValue("id")]
	obj = clone(obj)
	p.mu.Unlock()
	if !found {
		writeNotFound(w, coll, r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

// update merges a PATCH (null removes a field) or replaces the object on
// PUT; id and orgID stay the server's.
func (p *Platform) update(w http.ResponseWriter, r *http.Request) {
	coll, ok := p.collection(w, r)
	if !ok {
		return
	}
	patch, ok := readObject(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	p.mu.Lock()
	defer p.mu.Unlock()
	obj, found := p.objects[coll][id]
	if !found {
		writeNotFound(w, coll, id)
		return
	}
	next := map[string]any{}
	if r.Method == http.MethodPatch {
		next = clone(obj)
	}
	for k, v := range patch {
		if v == nil {
			delete(next, k)
			continue
		}
		next[k] = v
	}
	if r.Method == http.MethodPut {
		for k, v := range serverDefaults[coll] {
			if _, set := next[k]; !set {
				next[k] = clone(v)
			}
		}
	}
	next["id"], next["orgID"] = id, OrgID
	if status, code, msg := p.checkName(coll, id, next); status != 0 {
		writeError(w, status, code, msg)
		return
	}
	p.objects[coll][id] = next
	writeJSON(w, http.StatusOK, clone(next))
}

func (p *Platform) remove(w http.ResponseWriter, r *http.Request) {
	coll, ok := p.collection(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, found := p.objects[coll][id]; !found {
		writeNotFound(w, coll, id)
		return
	}
	delete(p.objects[coll], id)
	p.order[coll] = slices.DeleteFunc(p.order[coll], func(s string) bool { return s == id })
	delete(p.mappings[coll], id)
	if coll == "labels" {
		// A deleted label leaves no mapping behind, as on the platform.
		for _, byID := range p.mappings {
			for owner, labels := range byID {
				byID[owner] = slices.DeleteFunc(labels, func(s string) bool { return s == id })
				if len(byID[owner]) == 0 {
					delete(byID, owner)
				}
			}
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *Platform) mappingOwner(w http.ResponseWriter, r *http.Request) (coll, id string, ok bool) {
	coll, ok = p.collection(w, r)
	if !ok {
		return "", "", false
	}
	if coll == "labels" {
		writeError(w, http.StatusNotFound, "not found", "labels have no label mappings")
		return "", "", false
	}
	id = r.PathValue("id")
	if _, found := p.objects[coll][id]; !found {
		writeNotFound(w, coll, id)
		return "", "", false
	}
	return coll, id, true
}

func (p *Platform) listMappings(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	coll, id, ok := p.mappingOwner(w, r)
	if !ok {
		p.mu.Unlock()
		return
	}
	labels := []any{}
	for _, lid := range p.mappings[coll][id] {
		labels = append(labels, clone(p.objects["labels"][lid]))
	}
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"labels": labels})
}

func (p *Platform) addMapping(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	coll, id, ok := p.mappingOwner(w, r)
	if !ok {
		return
	}
	lid, _ := body["labelID"].(string)
	if lid == "" {
		writeError(w, http.StatusBadRequest, "invalid", "labelID is required")
		return
	}
	label, found := p.objects["labels"][lid]
	if !found {
		writeNotFound(w, "labels", lid)
		return
	}
	if slices.Contains(p.mappings[coll][id], lid) {
		writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("label %s is already mapped to %s %s", lid, coll, id))
		return
	}
	p.mappings[coll][id] = append(p.mappings[coll][id], lid)
	writeJSON(w, http.StatusCreated, map[string]any{"label": clone(label)})
}

func (p *Platform) removeMapping(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	coll, id, ok := p.mappingOwner(w, r)
	if !ok {
		return
	}
	lid := r.PathValue("labelID")
	if !slices.Contains(p.mappings[coll][id], lid) {
		writeError(w, http.StatusNotFound, "not found", fmt.Sprintf("label %s is not mapped to %s %s", lid, coll, id))
		return
	}
	p.mappings[coll][id] = slices.DeleteFunc(p.mappings[coll][id], func(s string) bool { return s == lid })
	if len(p.mappings[coll][id]) == 0 {
		delete(p.mappings[coll], id)
	}
	w.WriteHeader(http.StatusNoContent)
}

// checkName validates obj's name for a create (id "") or an update of id.
// The caller holds the lock.
func (p *Platform) checkName(coll, id string, obj map[string]any) (int, string, string) {
	name, ok := obj["name"].(string)
	if !ok || name == "" {
		return http.StatusBadRequest, "invalid", "name is required and must be a string"
	}
	if p.reject != nil && p.reject.MatchString(name) {
		return http.StatusUnprocessableEntity, "unprocessable entity", fmt.Sprintf("name %q is not allowed", name)
	}
	if uniqueNames[coll] {
		for oid, other := range p.objects[coll] {
			if oid != id && other["name"] == name {
				return http.StatusConflict, "conflict", fmt.Sprintf("%s named %q already exists", strings.TrimSuffix(coll, "s"), name)
			}
		}
	}
	return 0, "", ""
}

// --- inspection for tests ---

// Create stores obj in coll directly (no request counted) and returns its
// id, so tests can set up what already exists.
func (p *Platform) Create(coll string, obj map[string]any) (string, error) {
	if !slices.Contains(collections, coll) {
		return "", fmt.Errorf("no collection %q", coll)
	}
	obj = clone(obj)
	p.mu.Lock()
	defer p.mu.Unlock()
	if status, _, msg := p.checkName(coll, "", obj); status != 0 {
		return "", fmt.Errorf("create %s: %s", coll, msg)
	}
	return p.insertLocked(coll, obj), nil
}

// Map links label lid to object id of coll directly.
func (p *Platform) Map(coll, id, lid string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.objects[coll][id]; !ok || coll == "labels" {
		return fmt.Errorf("no %s %s to map", coll, id)
	}
	if _, ok := p.objects["labels"][lid]; !ok {
		return fmt.Errorf("no label %s", lid)
	}
	if !slices.Contains(p.mappings[coll][id], lid) {
		p.mappings[coll][id] = append(p.mappings[coll][id], lid)
	}
	return nil
}

// Objects returns copies of coll's objects in creation order.
func (p *Platform) Objects(coll string) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []map[string]any{}
	for _, id := range p.order[coll] {
		out = append(out, clone(p.objects[coll][id]))
	}
	return out
}

// Labels returns copies of the labels in creation order.
func (p *Platform) Labels() []map[string]any { return p.Objects("labels") }

// Buckets returns copies of the buckets in creation order.
func (p *Platform) Buckets() []map[string]any { return p.Objects("buckets") }

// Dashboards returns copies of the dashboards in creation order.
func (p *Platform) Dashboards() []map[string]any { return p.Objects("dashboards") }

// Tasks returns copies of the tasks in creation order.
func (p *Platform) Tasks() []map[string]any { return p.Objects("tasks") }

// Object returns a copy of one object.
func (p *Platform) Object(coll, id string) (map[string]any, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	obj, ok := p.objects[coll][id]
	return clone(obj), ok
}

// Find returns a copy of the first object of coll named name.
func (p *Platform) Find(coll, name string) (map[string]any, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range p.order[coll] {
		if obj := p.objects[coll][id]; obj["name"] == name {
			return clone(obj), true
		}
	}
	return nil, false
}

// MappingsOf returns the label ids mapped to object id of coll, sorted.
func (p *Platform) MappingsOf(coll, id string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.mappings[coll][id])
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// Snapshot renders all state as canonical JSON (collections and objects by
// id, keys sorted, mappings sorted), so two snapshots are equal exactly when
// the platforms hold the same things.
func (p *Platform) Snapshot() []byte {
	return p.snapshot(false)
}

// ContentSnapshot is Snapshot with generated ids replaced by the objects'
// names ("labels/label_1"), for comparing states across a delete and
// re-create, which gives an object a new id.
func (p *Platform) ContentSnapshot() []byte {
	return p.snapshot(true)
}

func (p *Platform) snapshot(byName bool) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := func(coll, id string) string {
		if !byName {
			return id
		}
		return fmt.Sprintf("%s/%v", coll, p.objects[coll][id]["name"])
	}
	state := map[string]any{}
	for _, coll := range collections {
		objs := map[string]any{}
		for id, obj := range p.objects[coll] {
			o := clone(obj)
			if byName {
				delete(o, "id")
			}
			objs[key(coll, id)] = o
		}
		maps := map[string]any{}
		for id, labels := range p.mappings[coll] {
			ls := make([]string, 0, len(labels))
			for _, l := range labels {
				ls = append(ls, key("labels", l))
			}
			slices.Sort(ls)
			maps[key(coll, id)] = ls
		}
		state[coll] = map[string]any{"objects": objs, "labelMappings": maps}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	_ = enc.Encode(state) // maps encode with sorted keys
	return buf.Bytes()
}

// --- helpers ---

func readObject(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var obj map[string]any
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		msg := "body must be a JSON object"
		if err != nil {
			msg += ": " + err.Error()
		}
		writeError(w, http.StatusBadRequest, "invalid", msg)
		return nil, false
	}
	return obj, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

func writeNotFound(w http.ResponseWriter, coll, id string) {
	writeError(w, http.StatusNotFound, "not found", fmt.Sprintf("%s %s not found", strings.TrimSuffix(coll, "s"), id))
}

// clone deep-copies JSON-shaped values so callers never share the
// platform's maps.
func clone[T any](v T) T {
	return any(cloneValue(v)).(T)
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range maps.All(x) {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	default:
		return v
	}
}
