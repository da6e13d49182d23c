package agentapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Routes and bounds of watching on agent nodes: the server says which
// paths of the node the stacks whose drift settings say watch declare,
// the agent watches them on its host and reports the ones that changed.
const (
	// PathWatch (GET ?since=VERSION) answers the node's WatchList. When
	// since is the list's current version the answer waits, up to
	// WatchWait, for the list to change: an agent holds one such request
	// open and learns of a new list at once.
	PathWatch = "/v1/agent/watch"
	// PathWatchEvents (POST) takes the WatchEvents the agent saw; 204.
	PathWatchEvents = "/v1/agent/watch/events"
	// WatchWait bounds how long a PathWatch request waits for a change.
	WatchWait = 20 * time.Second
	// MaxWatchPaths bounds the paths one node watches: the server lists
	// at most that many (a stack that would take a node past its bound
	// is not watched there) and an agent refuses a longer list.
	MaxWatchPaths = 10000
	// MaxWatchEventsBytes bounds the body of a PathWatchEvents request.
	MaxWatchEventsBytes = 4 << 20
)

// WatchList is what a node watches, and the version of the list: Paths
// as its resources declare them (the agent resolves them in its node
// root), Host paths of its host itself (dpkg's status file, for its
// packages) and systemd Units (for its services, on the manager the
// agent's CAIRN_SYSTEMD_ADDRESS names). At most MaxWatchPaths in all.
type WatchList struct {
	Version string   `json:"version"`
	Paths   []string `json:"paths"`
	Host    []string `json:"host,omitempty"`
	Units   []string `json:"units,omitempty"`
}

// Len is how many entries the list holds.
func (l *WatchList) Len() int { return len(l.Paths) + len(l.Host) + len(l.Units) }

// WatchEvents is what an agent saw change since its last report, each
// once: Paths of its list's Paths or Host, Units of its Units; or
// Overflow when events were dropped (everything watched may have
// changed).
type WatchEvents struct {
	Paths    []string `json:"paths,omitempty"`
	Units    []string `json:"units,omitempty"`
	Overflow bool     `json:"overflow,omitempty"`
}

// WatchList asks for the node's watch list; since is the version the
// agent holds ("" for none), and the answer waits while it is current.
func (c *Client) WatchList(ctx context.Context, since string) (*WatchList, error) {
	body, err := c.do(ctx, http.MethodGet, PathWatch, url.Values{"since": {since}}, nil)
	if err != nil {
		return nil, fmt.Errorf("watch list: %w", err)
	}
	var l WatchList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("watch list: %w", err)
	}
	if l.Len() > MaxWatchPaths {
		return nil, fmt.Errorf("watch list: %d entries, over the bound of %d", l.Len(), MaxWatchPaths)
	}
	return &l, nil
}

// ReportWatchEvents sends what the agent saw change.
func (c *Client) ReportWatchEvents(ctx context.Context, ev WatchEvents) error {
	raw, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("watch events: %w", err)
	}
	if _, err := c.do(ctx, http.MethodPost, PathWatchEvents, nil, raw); err != nil {
		return fmt.Errorf("report %d watch events: %w", len(ev.Paths)+len(ev.Units), err)
	}
	return nil
}
