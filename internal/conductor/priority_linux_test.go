//go:build linux

package conductor

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// threadNice reads the nice value of thread tid of this process.
func threadNice(t *testing.T, tid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command, which ends with the last ')': state is
	// field 3 and nice field 19 of the whole line.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	n, err := strconv.Atoi(fields[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLowPriorityThread: fn runs on a thread niced by lowPriorityNice,
// and the caller's thread keeps its priority.
func TestLowPriorityThread(t *testing.T) {
	runtime.LockOSThread() // the caller's thread stays the one measured
	defer runtime.UnlockOSThread()
	caller := syscall.Gettid()
	before := threadNice(t, caller)
	c := &Conductor{}
	var tid, nice int
	c.onLowPriorityThread(func() {
		tid = syscall.Gettid()
		nice = threadNice(t, tid)
	})
	if tid == caller {
		t.Fatal("fn ran on the caller's thread")
	}
	if want := min(before+lowPriorityNice, 19); nice != want {
		t.Errorf("fn's thread nice = %d, want %d", nice, want)
	}
	if n := threadNice(t, caller); n != before {
		t.Errorf("the caller's thread nice changed from %d to %d", before, n)
	}
}
