//go:build !linux

package conductor

// lowerThreadPriority does nothing outside Linux, where a thread's
// priority cannot be set on its own.
func lowerThreadPriority() error { return nil }
