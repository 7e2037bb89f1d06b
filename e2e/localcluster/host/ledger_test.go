package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A removal that uncovers more (a mount under a mount) is repeated until nothing is left.
func TestRemoveUntilGoneRepeatsUntilNothingIsLeft(t *testing.T) {
	left := []string{"/s/a", "/s/a/b", "/s/a/b/c"} // each round removes only the deepest
	// A minute: the removals end on the third round, however slow the machine.
	errs := removeUntilGone(time.Minute, time.Millisecond, func() []string { return left },
		func(p string) error {
			if p == left[len(left)-1] {
				left = left[:len(left)-1]
				return nil
			}
			return fmt.Errorf("%s is busy", p)
		},
		func(rest []string) error { return fmt.Errorf("still there: %v", rest) })
	if len(errs) != 0 || len(left) != 0 {
		t.Fatalf("left %v, errors %v; want nothing left and no error", left, errs)
	}
}

// What survives every round is named, with the last round's errors (not every round's).
func TestRemoveUntilGoneNamesWhatSurvived(t *testing.T) {
	calls := 0
	// 20 pauses' worth: several rounds as a rule, but only the first is sure on a loaded machine.
	errs := removeUntilGone(200*time.Millisecond, 10*time.Millisecond, func() []int { return []int{41, 42} },
		func(pid int) error {
			calls++
			return fmt.Errorf("kill %d: refused (call %d)", pid, calls)
		},
		func(rest []int) error { return fmt.Errorf("processes %v survived", rest) })
	if calls < 2 || calls%2 != 0 {
		t.Errorf("removals tried: %d, want both items in each round", calls)
	}
	got := errors.Join(errs...).Error()
	for _, want := range []string{fmt.Sprintf("kill 41: refused (call %d)", calls-1), fmt.Sprintf("kill 42: refused (call %d)", calls), "processes [41 42] survived"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q do not say %q", got, want)
		}
	}
	if len(errs) != 3 {
		t.Errorf("got %d errors, want the last round's two and one naming the survivors: %q", len(errs), got)
	}
}

// The ledger's undo removes what was recorded, and only that, also when the
// change never happened (a control plane killed between record and change).
func TestHostLedgerUndoesWhatItRecorded(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root (it creates and removes a bridge): run it as root")
	}
	state := t.TempDir()
	l := &Ledger{path: filepath.Join(state, LedgerFile)}
	const link = "lcledgertest0"
	const never = "lcledgernever0"
	if err := l.record(hostChangeLink, link); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "link", "add", link, "type", "bridge").CombinedOutput(); err != nil {
		t.Fatalf("ip link add: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", link).Run() })
	if err := l.record(hostChangeLink, never); err != nil {
		t.Fatal(err)
	}
	if err := Clean(state, ""); err != nil {
		t.Fatalf("Clean: %v", err)
	}
	if _, err := os.Stat("/sys/class/net/" + link); err == nil {
		t.Fatalf("interface %s was recorded and is still there", link)
	}
	if _, err := os.Stat(l.path); err == nil {
		t.Fatal("the ledger is kept after a clean teardown")
	}
	if err := Clean(state, ""); err != nil {
		t.Fatalf("a second Clean: %v", err)
	}
}
