package checkpoints

// Armed reports whether a background flush is scheduled, for the tests of Discard.
func (d *Deferred) Armed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.timer != nil
}
