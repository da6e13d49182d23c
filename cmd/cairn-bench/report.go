package main

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// machine describes where the figures come from.
type machine struct {
	date, cpus, cpuModel, memory, kernel string
	cairn, temporal, puppet, goVersion   string
	load                                 string // load average before the run
}

func describeMachine(o *options) machine {
	m := machine{
		date:      time.Now().Format("2006-01-02 15:04 MST"),
		cpus:      fmt.Sprint(runtime.NumCPU()),
		cpuModel:  procField("/proc/cpuinfo", "model name"),
		memory:    procField("/proc/meminfo", "MemTotal"),
		goVersion: runtime.Version(),
		puppet:    o.puppetVersion,
		load:      loadAverage(),
	}
	if kb, ok := strings.CutSuffix(m.memory, " kB"); ok {
		var n int64
		if _, err := fmt.Sscan(kb, &n); err == nil {
			m.memory = fmt.Sprintf("%.1f GiB", float64(n)/(1<<20))
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = "Linux " + strings.TrimSpace(string(b))
	}
	m.cairn = "unknown revision"
	if o.revision != "" {
		m.cairn = o.revision
	} else if bi, err := buildinfo.ReadFile(o.cairnBin); err == nil {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			m.cairn = rev
			if modified == "true" {
				m.cairn += " (with uncommitted changes)"
			}
		}
	}
	if bi, err := buildinfo.ReadFile(o.cairnBin); err == nil {
		m.cairn += ", " + bi.GoVersion
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, o.temporalBin, "--version").Output(); err == nil {
		m.temporal = strings.TrimSpace(string(out))
	}
	return m
}

func procField(file, key string) string {
	f, err := os.Open(file)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func (m machine) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "date:     %s\n", m.date)
	fmt.Fprintf(&b, "machine:  %s CPUs (%s), %s memory, %s\n", m.cpus, m.cpuModel, m.memory, m.kernel)
	fmt.Fprintf(&b, "load:     %s (1, 5, 15 min, before the run)\n", m.load)
	fmt.Fprintf(&b, "cairn:    %s\n", m.cairn)
	fmt.Fprintf(&b, "temporal: %s\n", m.temporal)
	if m.puppet != "" {
		fmt.Fprintf(&b, "puppet:   %s\n", m.puppet)
	}
	return b.String()
}

func secs(d time.Duration) string {
	s := d.Seconds()
	switch {
	case d <= 0:
		return "-"
	case s < 10:
		return fmt.Sprintf("%.2f s", s)
	case s < 100:
		return fmt.Sprintf("%.1f s", s)
	default:
		return fmt.Sprintf("%.0f s", s)
	}
}

func mib(kib int64) string {
	if kib <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d", (kib+512)>>10)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	var out []string
	for len(s) > 3 {
		out = append([]string{s[len(s)-3:]}, out...)
		s = s[:len(s)-3]
	}
	return strings.Join(append([]string{s}, out...), ",")
}

// hasFleet says whether rows hold fleet figures (the floor and Ansible
// columns).
func hasFleet(rows []row) bool {
	return slices.ContainsFunc(rows, func(r row) bool { return r.Shape == shapeFleet })
}

// cells is a row's columns; puppet adds the two Puppet columns, fleet the
// graph's preparation time, the agents' RSS (all of them together), the floor and the two Ansible
// columns.
func (r row) cells(puppet, fleet bool) []string {
	if r.Err != "" {
		c := []string{r.Shape, thousands(r.N), r.Phase, "FAILED", truncate(oneLine(r.Err), 40)}
		for len(c) < len(header(puppet, fleet)) {
			c = append(c, "")
		}
		return c
	}
	c := []string{r.Shape, thousands(r.N), r.Phase, secs(r.Wall), secs(r.Workflow),
		thousands(r.Steps), fmt.Sprintf("%.0f", r.stepsPerSec()), fmt.Sprintf("%.1f", r.msPerSeqStep()), thousands(r.Chain),
		thousands(r.Events), fmt.Sprint(r.Workflows), thousands(r.Largest), mib(r.CairnKiB), mib(r.TemporalKiB)}
	if puppet {
		switch {
		case r.Puppet > 0 && r.PuppetOver:
			c = append(c, "> "+secs(r.Puppet), fmt.Sprintf("> %.1f×", r.Puppet.Seconds()/r.Wall.Seconds()))
		case r.Puppet > 0:
			c = append(c, secs(r.Puppet), fmt.Sprintf("%.1f×", r.Puppet.Seconds()/r.Wall.Seconds()))
		case r.PuppetNote != "":
			c = append(c, r.PuppetNote, "")
		default:
			c = append(c, "–", "")
		}
	}
	if fleet {
		prep := ""
		if r.Prepare > 0 {
			prep = secs(r.Prepare)
		}
		c = append(c, prep, mib(r.AgentsKiB), secs(r.Floor))
		switch {
		case r.Ansible > 0 && r.AnsibleOver:
			c = append(c, "> "+secs(r.Ansible), fmt.Sprintf("> %.1f×", r.Ansible.Seconds()/r.Wall.Seconds()))
		case r.Ansible > 0:
			c = append(c, secs(r.Ansible), fmt.Sprintf("%.1f×", r.Ansible.Seconds()/r.Wall.Seconds()))
		case r.AnsibleNote != "":
			c = append(c, truncate(oneLine(r.AnsibleNote), 40), "")
		default:
			c = append(c, "–", "")
		}
	}
	return c
}

func header(puppet, fleet bool) []string {
	h := []string{"shape", "N", "phase", "wall", "workflow", "steps", "steps/s", "ms/seq step", "chain",
		"history events", "workflows", "largest wf events", "cairn RSS MiB", "temporal RSS MiB"}
	if puppet {
		h = append(h, "puppet", "puppet/cairn")
	}
	if fleet {
		h = append(h, "prepare", "agents RSS MiB", "floor", "ansible", "ansible/cairn")
	}
	return h
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return truncate(s, 160)
}

func printTable(w io.Writer, rows []row, puppet, fleet bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(header(puppet, fleet), "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(puppet, fleet), "\t")+"\t")
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	for _, r := range rows {
		if r.Err == "" && (r.Note != "" || r.Via != "") {
			fmt.Fprintf(w, "%s N=%s %s: %s (%s)\n", r.Shape, thousands(r.N), r.Phase, r.Note, r.Via)
		}
	}
}

// markdown is the whole report: machine, how to reproduce, the table and
// how to read it.
func markdown(m machine, o *options, rows []row, failures []string, fleet bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Date: %s\n", m.date)
	fmt.Fprintf(&b, "- Machine: %s CPUs (%s), %s memory, %s\n", m.cpus, m.cpuModel, m.memory, m.kernel)
	fmt.Fprintf(&b, "- Cairn: %s; Temporal CLI: %s\n", m.cairn, strings.ReplaceAll(m.temporal, "\n", " "))
	if m.puppet != "" {
		fmt.Fprintf(&b, "- Puppet: %s\n", m.puppet)
	} else {
		b.WriteString("- Puppet: not installed; no comparison\n")
	}
	fmt.Fprintf(&b, "- Load average (1, 5, 15 min): %s before the run, %s after\n", m.load, o.load)
	fmt.Fprintf(&b, "- Command: `cairn-bench %s`\n", strings.Join(os.Args[1:], " "))
	if o.repeat > 1 {
		fmt.Fprintf(&b, "- Each row: the run of median wall time of %d (Puppet: its median)\n", o.repeat)
	}
	b.WriteString("\n")
	puppet := o.puppet != ""
	h := header(puppet, fleet)
	b.WriteString("| " + strings.Join(h, " | ") + " |\n")
	b.WriteString("|")
	for i := range h {
		if i < 3 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		c := r.cells(puppet, fleet)
		for i := range c {
			c[i] = strings.ReplaceAll(c[i], "|", `\|`)
		}
		b.WriteString("| " + strings.Join(c, " | ") + " |\n")
	}
	b.WriteString("\nChecked after each phase (the package or graph went in as a request body, as stack URLs, or to a cluster's nodes):\n\n")
	for i := 0; i < len(rows); {
		j := i
		var parts []string
		for ; j < len(rows) && rows[j].Shape == rows[i].Shape && rows[j].N == rows[i].N; j++ {
			if rows[j].Err == "" && rows[j].Note != "" {
				parts = append(parts, rows[j].Phase+": "+rows[j].Note)
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "- %s %s (%s): %s\n", rows[i].Shape, thousands(rows[i].N), rows[i].Via, strings.Join(parts, "; "))
		}
		i = j
	}
	if len(failures) > 0 {
		b.WriteString("\nFailed runs:\n\n")
		for _, f := range failures {
			fmt.Fprintf(&b, "- %s\n", oneLine(f))
		}
	}
	return b.String()
}
