package localcluster

import (
	"testing"
	"time"
)

// Kill takes the process down by its own pid; Restart brings it back with the same command,
// in its place in the stop order, and the record on disk follows.
func TestKillAndRestartAProcessByItsOwnPid(t *testing.T) {
	c := &Cluster{StateDir: t.TempDir()}
	for _, name := range []string{"first", "middle", "last"} {
		if _, err := c.startProcess(name, "/bin/sleep", []string{"600"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { stopProcesses(c.procs, time.Second) })
	old := c.procs[1]
	if err := c.Restart("middle"); err == nil {
		t.Fatal("Restart of a running process must refuse")
	}
	if err := c.Kill("middle"); err != nil {
		t.Fatal(err)
	}
	if alive(old) {
		t.Fatalf("pid %d still runs after Kill", old.pid)
	}
	if !alive(c.procs[0]) || !alive(c.procs[2]) {
		t.Fatal("Kill took down another process")
	}
	if err := c.Kill("middle"); err == nil {
		t.Fatal("Kill of a dead process must say so")
	}
	if err := c.Restart("middle"); err != nil {
		t.Fatal(err)
	}
	now := c.procs[1]
	if len(c.procs) != 3 || now.name != "middle" || now.pid == old.pid || !alive(now) {
		t.Fatalf("after Restart: %d processes, [1] = %s pid %d (old %d), alive %v", len(c.procs), now.name, now.pid, old.pid, alive(now))
	}
	if now.args[0] != "600" {
		t.Fatalf("restarted with %v, want the first command's args", now.args)
	}
	onDisk, err := loadProcesses(c.StateDir)
	if err != nil || len(onDisk) != 3 || onDisk[1].pid != now.pid {
		t.Fatalf("the record on disk does not follow the restart: %v %v", onDisk, err)
	}
	if err := c.Kill("nonesuch"); err == nil {
		t.Fatal("Kill of an unknown name must refuse")
	}
}
