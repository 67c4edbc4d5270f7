//go:build linux

package conductor

import (
	"runtime"
	"syscall"
)

// lowPriorityNice is how much less a low-priority thread weighs with the
// kernel's scheduler than the rest of the process (nice +10: about a
// tenth of a busy API thread's share when both want the same core).
const lowPriorityNice = 10

// lowerThreadPriority dedicates the calling goroutine's OS thread to it and
// lowers that thread's scheduling priority by lowPriorityNice. The
// goroutine must end locked (never call runtime.UnlockOSThread): the
// runtime then ends the thread with it, so the lowered priority never
// reaches another goroutine.
func lowerThreadPriority() error {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	// The raw getpriority system call answers 20 - nice.
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return err
	}
	nice := min(20-raw+lowPriorityNice, 19)
	return syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
}
