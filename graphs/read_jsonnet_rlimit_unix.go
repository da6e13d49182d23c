//go:build linux || darwin || freebsd || netbsd || openbsd

package graphs

import "syscall"

// limitMemory caps this process's data segment, so a Jsonnet child that
// allocates without end dies instead of the machine swapping. RLIMIT_DATA
// rather than RLIMIT_AS: the Go runtime reserves (without using) large
// address ranges, which RLIMIT_AS would count.
func limitMemory(bytes int64) {
	if bytes <= 0 {
		return
	}
	lim := &syscall.Rlimit{Cur: uint64(bytes), Max: uint64(bytes)}
	_ = syscall.Setrlimit(syscall.RLIMIT_DATA, lim)
}
