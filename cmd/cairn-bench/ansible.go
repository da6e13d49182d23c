package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-io/cairn/model"
)

// compareAnsible runs the steps the fleet's first execution ran as an
// Ansible playbook, when ansible-playbook is on PATH and -ansible is not
// off (silently not otherwise): one inventory host per node (and one for the control
// plane), each with ansible_connection=local; one play, `strategy: free`,
// forks as many as hosts, no facts; each task `command: "true"` on the
// hosts whose step ran. Ansible has no cross-host dependencies: only the
// order of the tasks is kept. Times go beside the execute (the playbook),
// re-execute (the playbook again) and dry-run (--check) rows; a run is
// stopped after -ansible-timeout (its time then a lower bound, and the
// later phases not run).
func (r *runner) compareAnsible(ctx context.Context, nodes int, graph []model.StepDeps, ran []model.StepProgress, rows []row) {
	bin, err := exec.LookPath("ansible-playbook")
	if err != nil || len(ran) == 0 || r.opts.ansibleOff {
		return
	}
	note := func(s string) {
		for i := range rows {
			rows[i].AnsibleNote = s
		}
	}
	dir := filepath.Join(r.tmp, fmt.Sprintf("fleet-%d", nodes), "ansible")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		note("error: " + err.Error())
		return
	}
	tasks, hosts := playbookOrder(graph, ran)
	inventory, playbook := ansibleFiles(tasks, hosts)
	forks := strings.Count(inventory, " ansible_connection=local\n")
	for name, body := range map[string]string{"inventory.ini": inventory, "fleet.yml": playbook} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			note("error: " + err.Error())
			return
		}
	}
	for i, args := range [][]string{nil, nil, {"--check"}} {
		if i >= len(rows) {
			break
		}
		actx, cancel := context.WithTimeout(ctx, r.opts.ansibleTimeout)
		cmd := exec.CommandContext(actx, bin, append([]string{"-i", "inventory.ini", "-f", strconv.Itoa(forks), "fleet.yml"}, args...)...)
		cmd.Dir = dir
		// Its forks go with it when it is stopped.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 10 * time.Second
		cmd.Env = append(os.Environ(), "ANSIBLE_HOST_KEY_CHECKING=False", "ANSIBLE_RETRY_FILES_ENABLED=False",
			"ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, "tmp"), "ANSIBLE_NOCOLOR=1")
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(t0)
		cancel()
		if err != nil && actx.Err() != nil && ctx.Err() == nil {
			// Over the bound: its time is a lower bound, and the
			// next phases (as long) are not run.
			rows[i].Ansible, rows[i].AnsibleOver = d, true
			r.logf("  ansible-playbook (%s): stopped after %s", rows[i].Phase, d.Round(time.Millisecond))
			for j := i + 1; j < len(rows); j++ {
				rows[j].AnsibleNote = "not run"
			}
			return
		}
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) || actx.Err() != nil {
				err = fmt.Errorf("%w: %s", err, lastLine(string(out)))
			}
			rows[i].AnsibleNote = "error: " + err.Error()
			r.logf("  ansible-playbook %s: %v", rows[i].Phase, err)
			continue
		}
		if err := ansibleRecap(string(out), forks); err != nil {
			rows[i].AnsibleNote = "error: " + err.Error()
			r.logf("  ansible-playbook %s: %v", rows[i].Phase, err)
			continue
		}
		rows[i].Ansible = d
		r.logf("  ansible-playbook (%s): %s", rows[i].Phase, d.Round(time.Millisecond))
	}
}

// ansibleFiles are the inventory and the playbook of compareAnsible.
func ansibleFiles(tasks []string, hosts map[string][]string) (inventory, playbook string) {
	all := map[string]bool{}
	for _, hs := range hosts {
		for _, h := range hs {
			all[h] = true
		}
	}
	var inv strings.Builder
	inv.WriteString("[fleet]\n")
	for _, h := range slices.Sorted(maps.Keys(all)) {
		fmt.Fprintf(&inv, "%s ansible_connection=local\n", ansibleHost(h))
	}
	inv.WriteString("\n[fleet:vars]\nansible_python_interpreter=\"{{ ansible_playbook_python }}\"\n")
	var pb strings.Builder
	pb.WriteString("- hosts: fleet\n  strategy: free\n  gather_facts: false\n  tasks:\n")
	for _, t := range tasks {
		names := make([]string, 0, len(hosts[t]))
		for _, h := range hosts[t] {
			names = append(names, strconv.Quote(ansibleHost(h)))
		}
		fmt.Fprintf(&pb, "    - name: %s\n      command: \"true\"\n      changed_when: true\n      when: inventory_hostname in [%s]\n",
			strconv.Quote(t), strings.Join(names, ", "))
	}
	return inv.String(), pb.String()
}

// ansibleRecap checks the PLAY RECAP of a run: every one of hosts
// reached, none failed (a playbook that matched no host exits 0 too).
func ansibleRecap(out string, hosts int) error {
	ok := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "node-") || !strings.Contains(line, " ok=") {
			continue
		}
		if !strings.Contains(line, " unreachable=0 ") || !strings.Contains(line, " failed=0 ") {
			return fmt.Errorf("recap: %s", strings.Join(strings.Fields(line), " "))
		}
		ok++
	}
	if ok != hosts {
		return fmt.Errorf("%d of %d hosts in the recap: %s", ok, hosts, lastLine(out))
	}
	return nil
}

// ansibleHost is a node's inventory name.
func ansibleHost(node string) string { return "node-" + node }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return truncate(lines[len(lines)-1], 200)
}
