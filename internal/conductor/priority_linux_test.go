//go:build linux

package conductor

import (
	"os"
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

func TestLowerThreadPriority(t *testing.T) {
	before := threadNice(t, syscall.Gettid())
	type result struct {
		tid int
		err error
	}
	got := make(chan result)
	release := make(chan struct{})
	go func() {
		err := lowerThreadPriority()
		got <- result{syscall.Gettid(), err}
		<-release // ends locked: the runtime ends the thread too
	}()
	r := <-got
	defer close(release)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := min(before+createWorkerNice, 19); threadNice(t, r.tid) != want {
		t.Errorf("worker thread nice = %d, want %d", threadNice(t, r.tid), want)
	}
	if n := threadNice(t, syscall.Gettid()); n != before {
		t.Errorf("the test's own thread nice changed from %d to %d", before, n)
	}
}
