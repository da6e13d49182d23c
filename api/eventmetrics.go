package api

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// progressCounter is what counts the progress queries it asks: the
// starter does.
type progressCounter interface {
	ProgressQueries() int64
}

// registerEventMetrics exposes what following executions costs: the
// followers, their clients and what they keep, the reads of changes and
// the refused streams; and, when exec counts them, the progress queries
// asked of Temporal (by every route, the event streams' followers
// included). h may be nil (no executions).
func registerEventMetrics(reg prometheus.Registerer, h *hub, exec Executions) error {
	var ms []prometheus.Collector
	if h != nil {
		stat := func(f func(hubStats) int) func() float64 {
			return func() float64 { return float64(f(h.stats())) }
		}
		ms = append(ms,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "cairn_events_followed_executions",
				Help: "Executions whose event streams are followed now (one follower each).",
			}, stat(func(s hubStats) int { return s.Followed })),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "cairn_events_clients",
				Help: "Event-stream clients connected now, all executions.",
			}, stat(func(s hubStats) int { return s.Clients })),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "cairn_events_kept_events",
				Help: "Step and status events the followers keep: each step's latest, once per execution.",
			}, stat(func(s hubStats) int { return s.Keys })),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "cairn_events_kept_bytes",
				Help: "Bytes of the step and status events the followers keep (one copy per execution).",
			}, stat(func(s hubStats) int { return s.Bytes })),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "cairn_events_reads_total",
				Help: "Reads of an execution's changes by the event streams' followers.",
			}, func() float64 { return float64(h.polls.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        "cairn_events_refused_total",
				Help:        "Event streams refused: too many executions followed, or too many clients of one.",
				ConstLabels: prometheus.Labels{"reason": "executions"},
			}, func() float64 { return float64(h.refused[0].Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        "cairn_events_refused_total",
				Help:        "Event streams refused: too many executions followed, or too many clients of one.",
				ConstLabels: prometheus.Labels{"reason": "clients"},
			}, func() float64 { return float64(h.refused[1].Load()) }),
		)
	}
	if pc, ok := exec.(progressCounter); ok {
		ms = append(ms, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cairn_progress_queries_total",
			Help: "Progress queries asked of Temporal (executions' and their shards').",
		}, func() float64 { return float64(pc.ProgressQueries()) }))
	}
	for _, m := range ms {
		if err := reg.Register(m); err != nil {
			return fmt.Errorf("register event metrics: %w", err)
		}
	}
	return nil
}
