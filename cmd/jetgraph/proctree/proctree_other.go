//go:build !linux

package proctree

// Read answers ErrUnsupported: outside Linux there is no /proc to read the tree from.
func Read(pid int) (Usage, error) { return Usage{}, ErrUnsupported }
