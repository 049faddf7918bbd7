package graph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// taskIDAsFirstWritten is how task ids were first made; taskID must keep giving the same ids.
func taskIDAsFirstWritten(checkpointID string, step int, ns, name, path string) string {
	return uuid.NewSHA1(taskNamespace, fmt.Appendf(nil, "%s|%d|%s|%s|%s", checkpointID, step, ns, name, path)).String()
}

func TestTaskIDsStayTheSame(t *testing.T) {
	for _, c := range []struct {
		cp         string
		step       int
		ns, n, pth string
	}{
		{"", -1, "", Start, "pull"},
		{"019ac0de-0000-7000-8000-000000000000", 0, "", "echo", "pull"},
		{"019ac0de-0000-7000-8000-000000000000", 12, "outer:1f|inner:2e", "é node", "push3"},
		{strings.Repeat("c", 300), 1 << 40, strings.Repeat("n", 200), "x", "push0"}, // past the stack buffer
	} {
		if got, want := taskID(c.cp, c.step, c.ns, c.n, c.pth), taskIDAsFirstWritten(c.cp, c.step, c.ns, c.n, c.pth); got != want {
			t.Errorf("taskID(%q, %d, %q, %q, %q) = %s, want %s", c.cp, c.step, c.ns, c.n, c.pth, got, want)
		}
	}
}

func FuzzTaskID(f *testing.F) {
	f.Add("cp", 3, "ns", "node", "pull")
	f.Fuzz(func(t *testing.T, cp string, step int, ns, name, path string) {
		if got, want := taskID(cp, step, ns, name, path), taskIDAsFirstWritten(cp, step, ns, name, path); got != want {
			t.Fatalf("taskID = %s, want %s", got, want)
		}
	})
}
