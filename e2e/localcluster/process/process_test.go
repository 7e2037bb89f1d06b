package process

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// Kill takes the process down by its own pid; Restart brings it back with the same command,
// in its place in the stop order, and the record on disk follows.
func TestKillAndRestartAProcessByItsOwnPid(t *testing.T) {
	dir := t.TempDir()
	c := NewSet(dir, false)
	for _, name := range []string{"first", "middle", "last"} {
		if _, err := c.Start(name, "/bin/sleep", []string{"600"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { c.Stop(time.Second) })
	old := c.procs[1]
	if err := c.Restart("middle"); err == nil {
		t.Fatal("Restart of a running process must refuse")
	}
	if err := c.Kill("middle"); err != nil {
		t.Fatal(err)
	}
	if old.Alive() {
		t.Fatalf("pid %d still runs after Kill", old.Pid)
	}
	if !c.procs[0].Alive() || !c.procs[2].Alive() {
		t.Fatal("Kill took down another process")
	}
	if err := c.Kill("middle"); err == nil {
		t.Fatal("Kill of a dead process must say so")
	}
	if err := c.Restart("middle"); err != nil {
		t.Fatal(err)
	}
	now := c.procs[1]
	if len(c.procs) != 3 || now.Name != "middle" || now.Pid == old.Pid || !now.Alive() {
		t.Fatalf("after Restart: %d processes, [1] = %s pid %d (old %d), alive %v", len(c.procs), now.Name, now.Pid, old.Pid, now.Alive())
	}
	if now.Args[0] != "600" {
		t.Fatalf("restarted with %v, want the first command's args", now.Args)
	}
	onDisk, err := Load(dir)
	if err != nil || len(onDisk.All()) != 3 || onDisk.All()[1].Pid != now.Pid {
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
	c := NewSet(os.Getenv(helperEnv+"_STATE"), mode == "outlive")
	for _, name := range []string{"one", "two"} {
		p, err := c.Start(name, "/bin/sleep", []string{"600"})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("started %s %d %s\n", p.Name, p.Pid, p.Start)
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
			var started []*Process
			s := bufio.NewScanner(out)
			for s.Scan() && s.Text() != "ready" {
				var p Process
				if n, _ := fmt.Sscanf(s.Text(), "started %s %d %s", &p.Name, &p.Pid, &p.Start); n == 3 {
					started = append(started, &p)
				}
			}
			t.Cleanup(func() { Stop(started, time.Second) })
			if len(started) != 2 {
				_ = cmd.Process.Kill()
				t.Fatalf("the helper reported %d started processes, want 2", len(started))
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			// The kernel delivers the parent-death signal as the helper exits, and the children
			// die in their own time: "die" waits until they are gone (30 s at most, however
			// loaded the machine); "outlive" gives them a second in which they must not die.
			if tc.wantSurvives {
				time.Sleep(time.Second)
			} else {
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if !slices.ContainsFunc(started, (*Process).Alive) {
						break
					}
				}
			}
			for _, p := range started {
				running := p.Alive()
				t.Logf("%s: helper %d killed; %s (pid %d) running: %v", tc.mode, cmd.Process.Pid, p.Name, p.Pid, running)
				if running != tc.wantSurvives {
					t.Errorf("%s (pid %d) running=%v after its caller was killed, want %v", p.Name, p.Pid, running, tc.wantSurvives)
				}
			}
		})
	}
}

// Teardown by record: a recorded pid whose start time differs is a recycled pid, never ours.
func TestTeardownKillsOnlyTheProcessItStarted(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	start, err := StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// A record whose start time differs is a recycled pid: not ours.
	stranger := Recorded("stranger", cmd.Process.Pid, start+"1")
	if stranger.Alive() {
		t.Fatal("a pid with another start time was taken for our process")
	}
	if errs := Stop([]*Process{stranger}, time.Second); len(errs) != 0 {
		t.Fatal(errs)
	}
	if _, err := StartTime(cmd.Process.Pid); err != nil {
		t.Fatalf("teardown killed a process it did not start: %v", err)
	}
	ours := Recorded("ours", cmd.Process.Pid, start)
	if !ours.Alive() {
		t.Fatal("our own running process is not seen as alive")
	}
	go func() { _ = cmd.Wait() }() // reap, as the starter would
	if errs := Stop([]*Process{ours}, 2*time.Second); len(errs) != 0 {
		t.Fatal(errs)
	}
	if ours.Alive() {
		t.Fatal("our process survived teardown")
	}
}
