// Package process starts, supervises and stops the programs of a local control
// plane, each by the pid it recorded (never by name), with its output in a log
// of its own.
package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// Process is one program a Set started, or found recorded on disk. Pid and
// the kernel's start time of that pid together name it, so that a recycled
// pid is never taken for it.
type Process struct {
	Name string
	Log  string // <state>/logs/<name>.log
	Pid  int
	// Start is field 22 of /proc/<pid>/stat when it started.
	Start string
	// Binary, Args and Env are how it was started (so Restart can start it
	// again); empty for a process found recorded by another invocation.
	Binary string
	Args   []string
	Env    []string

	cmd  *exec.Cmd
	done chan struct{} // closed when it exits; nil when another invocation started it
}

// Recorded is a process known only by its record: name, pid and start time.
func Recorded(name string, pid int, start string) *Process {
	return &Process{Name: name, Pid: pid, Start: start}
}

// start runs binary with args, stdout and stderr to logPath, in a session of
// its own so it can be signalled as a group. Unless outliveCaller, it dies
// with the process that started it (a test binary, however it ends).
func start(name, logPath, binary string, args, env []string, outliveCaller bool) (*Process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if !outliveCaller {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	fmt.Fprintf(logFile, "# %s %s\n", binary, strings.Join(args, " "))
	if err := startFromKeptThread(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, Log: logPath, Pid: cmd.Process.Pid, Binary: binary, Args: args, Env: env, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	p.Start, _ = StartTime(p.Pid)
	return p, nil
}

// Linux sends the parent-death signal when the thread that forked the child
// exits, not the process, and the Go runtime ends a thread whose goroutine
// locked it and returned. So every child is forked from one thread kept
// locked for that alone: it ends only with the process.
var spawner struct {
	once sync.Once
	reqs chan spawnRequest
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func startFromKeptThread(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnRequest{cmd, done}
	return <-done
}

// Exited reports whether the process has stopped: known at once for a process
// this invocation started, read from /proc for a recorded one.
func (p *Process) Exited() bool {
	if p.done == nil {
		return !p.Alive()
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Alive is true when its pid still runs and is the same process (the same
// start time).
func (p *Process) Alive() bool {
	start, err := StartTime(p.Pid)
	return err == nil && start == p.Start
}

// Running is true while it runs.
func (p *Process) Running() bool { return !p.Exited() && p.Alive() }

// ExitedError says that the process exited, how (when this invocation started
// it), and quotes the end of its log: a test's state directory is removed with
// the test, so the log's tail must travel in the error.
func (p *Process) ExitedError() error {
	how := "exited"
	if p.Exited() && p.cmd != nil && p.cmd.ProcessState != nil {
		how = "exited (" + p.cmd.ProcessState.String() + ")"
	}
	return fmt.Errorf("%s %s; the end of %s:\n%s", p.Name, how, p.Log, logTail(p.Log, 20))
}

// logTail returns the last n lines of the file at path, indented, or why it
// could not be read.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "    (unreadable: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// kill stops it as a crash would: SIGKILL to its group. It returns once the
// process has exited.
func (p *Process) kill() error {
	if !p.Running() {
		return fmt.Errorf("%s (pid %d) is not running", p.Name, p.Pid)
	}
	signal(p.Pid, syscall.SIGKILL)
	if p.waitExit(10*time.Second, 20*time.Millisecond) != nil {
		return fmt.Errorf("%s (pid %d) did not exit within 10s of SIGKILL", p.Name, p.Pid)
	}
	return nil
}

// waitExit waits up to timeout for the process to stop running.
func (p *Process) waitExit(timeout, interval time.Duration) error {
	return poll.Until(context.Background(), timeout, interval, func(context.Context) (bool, error) { return !p.Running(), nil })
}

// Stop stops procs in reverse order: SIGTERM to each group, then SIGKILL
// after grace.
func Stop(procs []*Process, grace time.Duration) []error {
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		if !p.Running() {
			continue
		}
		signal(p.Pid, syscall.SIGTERM)
		if p.waitExit(grace, 50*time.Millisecond) == nil && p.Exited() {
			continue
		}
		if p.Running() {
			signal(p.Pid, syscall.SIGKILL)
		}
		// Exited: reaped, for a process this invocation started; gone from /proc otherwise.
		err := poll.Until(context.Background(), 5*time.Second, 20*time.Millisecond, func(context.Context) (bool, error) { return p.Exited(), nil })
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, p.Pid))
		}
	}
	return errs
}

// signal sends sig to the process group pid leads (every process this package
// starts leads its own session), or to pid alone when it leads none.
func signal(pid int, sig syscall.Signal) {
	if err := syscall.Kill(-pid, sig); err != nil {
		_ = syscall.Kill(pid, sig)
	}
}

// StartTime is the kernel's start time of pid (field 22 of /proc/<pid>/stat),
// or an error when pid does not run (a zombie does not).
func StartTime(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	// The command name (field 2) may hold spaces; fields after its ')' are fixed.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", errors.New("malformed /proc stat")
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return "", errors.New("short /proc stat")
	}
	// A zombie is not running any more.
	if fields[0] == "Z" {
		return "", errors.New("zombie")
	}
	return fields[19], nil
}

// Tail returns the last n bytes of a program's output, marked as cut when it
// was: enough to quote in an error without flooding it.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
