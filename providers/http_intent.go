package providers

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
)

// httpIntentHeader carries a create's intent key (Env.Intent), the header
// of the IETF draft on idempotent POSTs: a server that honours it answers
// a repeated create with the object the first one made.
const httpIntentHeader = "Idempotency-Key"

// withIntent is s sending the intent key on its requests, unless the
// spec's headers set the header themselves.
func withIntent(s *httpSpec, intent string) *httpSpec {
	if intent == "" {
		return s
	}
	for k := range s.Headers {
		if strings.EqualFold(k, httpIntentHeader) {
			return s
		}
	}
	c := *s
	c.Headers = maps.Clone(s.Headers)
	if c.Headers == nil {
		c.Headers = map[string]string{}
	}
	c.Headers[httpIntentHeader] = intent
	return &c
}

// findCreated looks, in the collection, for the object an interrupted
// create made: the one object whose fields the spec sets all hold the
// spec's values (its natural key, e.g. a name). None means the create did
// not happen; several mean the object cannot be told apart from others,
// which a person must sort out rather than a retry creating one more.
func (p *httpProvider) findCreated(ctx context.Context, s *httpSpec) (State, error) {
	if len(s.Body) == 0 {
		return State{}, configErrorf("body", "an interrupted create of an object without body fields cannot be told from others; check %s for an object it may have made", redactURL(s.URL+s.Path))
	}
	target := s.URL + cmp.Or(s.ListPath, s.Path)
	_, body, err := p.do(ctx, s, "list", http.MethodGet, target, nil, false)
	if err != nil {
		return State{}, fmt.Errorf("find the object an interrupted create made: %w", err)
	}
	items, err := httpArrayAt(body, s.ListPointer, lastSegment(cmp.Or(s.ListPath, s.Path)))
	if err != nil {
		return State{}, fmt.Errorf("GET %s: %w", redactURL(target), err)
	}
	var ids []string
	for _, item := range items {
		obj, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if !EqualValues(pickFields(map[string]any(s.Body), obj), map[string]any(s.Body)) {
			continue
		}
		id, err := idString(obj["id"])
		if err != nil {
			return State{}, fmt.Errorf("GET %s: a matching object without an id: %w", redactURL(target), err)
		}
		ids = append(ids, id)
	}
	switch len(ids) {
	case 0:
		return State{}, nil
	case 1:
		return p.read(ctx, s, ids[0])
	}
	return State{}, configErrorf("", "an interrupted create may have made one of %d objects with the same fields in %s (ids %s): keep one and delete the others, or give the spec its id",
		len(ids), redactURL(target), strings.Join(ids, ", "))
}
