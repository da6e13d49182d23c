//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package graphs

// limitMemory has no portable equivalent here; the child still has its
// stack limit, Go's soft memory limit and the parent's deadline.
func limitMemory(int64) {}
