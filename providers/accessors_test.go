package providers

// Helpers only tests read.

// cutNotice is the line capture writes where it dropped output.
func cutNotice(dropped int64) string { return outputCut{Dropped: dropped}.notice() }

// Pending reports how many files and directories wait to be synced.
func (d *DeferredSync) Pending() (files, dirs int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.files), len(d.dirs)
}
