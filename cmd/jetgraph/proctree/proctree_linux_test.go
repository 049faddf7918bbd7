//go:build linux

package proctree

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as one of the processes of the real tree below.
const helperEnv = "PROCTREE_TEST_HELPER"

// spinCPU is the CPU time each spinning child uses before it says so.
const spinCPU = 300 * time.Millisecond

// tickSlack is what /proc's clock ticks (1/100 s, user and system time each rounded down) may
// show less than the exact time getrusage measured the spin with: a few ticks per process.
const tickSlack = 50 * time.Millisecond

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "parent":
		os.Exit(parent())
	case "spin-and-stay":
		spin()
		fmt.Printf("stayed %d\n", os.Getpid())
		select {} // killed by its parent
	case "spin-and-exit":
		spin()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// parent starts one child that spins and stays, and one that spins and exits, which it reaps; it
// says so on stdout and stays until its stdin closes.
func parent() int {
	self, _ := os.Executable()
	child := func(role string) *exec.Cmd {
		c := exec.Command(self)
		c.Env = append(os.Environ(), helperEnv+"="+role)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		return c
	}
	stay, exit := child("spin-and-stay"), child("spin-and-exit")
	if err := stay.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = stay.Process.Kill(); _ = stay.Wait() }()
	if err := exit.Run(); err != nil { // Run waits: its time moves into our cutime/cstime
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("reaped")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

// spin uses the CPU until this process has used spinCPU of it.
func spin() {
	for {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= spinCPU {
			return
		}
		for i := 0; i < 1e6; i++ {
			_ = strconv.Itoa(i)
		}
	}
}

// TestReadRealTree reads a real process tree: a parent, a live child that used spinCPU, and a
// reaped child that used as much. Both children's time counts in the parent's tree, and the
// live child is one of its processes.
func TestReadRealTree(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperEnv+"=parent")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })

	// The two lines come in either order, once each child has spun.
	stayed, reaped := 0, false
	sc := bufio.NewScanner(out)
	for (stayed == 0 || !reaped) && sc.Scan() {
		line := sc.Text()
		if pid, ok := strings.CutPrefix(line, "stayed "); ok {
			stayed, _ = strconv.Atoi(pid)
		}
		reaped = reaped || line == "reaped"
	}
	if stayed == 0 || !reaped {
		t.Fatalf("the helper tree ended before both children spun (stayed %d, reaped %v): %v", stayed, reaped, sc.Err())
	}

	u, err := Read(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if u.Procs[0] != cmd.Process.Pid || !slices.Contains(u.Procs, stayed) || len(u.Procs) != 2 {
		t.Fatalf("the tree of %d is %v, want it and its live child %d", cmd.Process.Pid, u.Procs, stayed)
	}
	if u.Root < spinCPU-tickSlack || u.Root >= u.CPU { // the reaped child's time is the parent's own
		t.Fatalf("the parent's own CPU is %v of the tree's %v, want at least the reaped child's %v", u.Root, u.CPU, spinCPU)
	}
	if u.CPU < 2*(spinCPU-tickSlack) {
		t.Fatalf("the tree used %v, want at least %v (a live child's and a reaped child's %v each)", u.CPU, 2*spinCPU, spinCPU)
	}
	alone, err := Read(stayed)
	if err != nil {
		t.Fatal(err)
	}
	if alone.CPU < spinCPU-tickSlack || alone.CPU >= u.CPU || !slices.Equal(alone.Procs, []int{stayed}) {
		t.Fatalf("the live child alone: %v over %v; its tree's %v", alone.CPU, alone.Procs, u.CPU)
	}
	if _, err := Read(1 << 30); err == nil {
		t.Fatal("Read of a pid that does not exist answered no error")
	}
}
