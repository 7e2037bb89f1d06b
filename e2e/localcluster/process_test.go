package localcluster

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
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

// helperEnv makes the test binary, run again by TestAKilledCallerLeavesNoProcess, the caller
// that starts processes and is then killed.
const helperEnv = "LOCALCLUSTER_PROCESS_HELPER"

// The helper: start two processes as a control plane does, print their records, wait to be
// killed. It does nothing in an ordinary run.
func TestProcessHelperStartsAndWaits(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	c := &Cluster{StateDir: os.Getenv(helperEnv + "_STATE"), outliveCaller: mode == "outlive"}
	for _, name := range []string{"one", "two"} {
		p, err := c.startProcess(name, "/bin/sleep", []string{"600"})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("started %s %d %s\n", p.name, p.pid, p.start)
	}
	fmt.Println("ready")
	time.Sleep(10 * time.Minute)
}

// A test binary killed with SIGKILL (its -timeout, CI's limit) takes the processes it started
// with it; a cluster started to outlive its caller keeps them (the negative control, which
// shows the first reading could have failed).
func TestAKilledCallerLeavesNoProcess(t *testing.T) {
	for _, tc := range []struct {
		mode         string
		wantSurvives bool
	}{{"die", false}, {"outlive", true}} {
		t.Run(tc.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestProcessHelperStartsAndWaits$", "-test.v")
			cmd.Env = append(os.Environ(), helperEnv+"="+tc.mode, helperEnv+"_STATE="+t.TempDir())
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var started []*process
			s := bufio.NewScanner(out)
			for s.Scan() && s.Text() != "ready" {
				var p process
				if n, _ := fmt.Sscanf(s.Text(), "started %s %d %s", &p.name, &p.pid, &p.start); n == 3 {
					started = append(started, &p)
				}
			}
			t.Cleanup(func() { stopProcesses(started, time.Second) })
			if len(started) != 2 {
				_ = cmd.Process.Kill()
				t.Fatalf("the helper reported %d started processes, want 2", len(started))
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			time.Sleep(time.Second) // the kernel delivers the parent-death signal as the helper exits
			for _, p := range started {
				running := alive(p)
				t.Logf("%s: helper %d killed; %s (pid %d) running: %v", tc.mode, cmd.Process.Pid, p.name, p.pid, running)
				if running != tc.wantSurvives {
					t.Errorf("%s (pid %d) running=%v after its caller was killed, want %v", p.name, p.pid, running, tc.wantSurvives)
				}
			}
		})
	}
}
