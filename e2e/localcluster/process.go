package localcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one upstream program the control plane started. Its record in
// <state>/processes holds the pid and the kernel's start time of that pid, so
// that teardown (possibly from another invocation: `localcluster down`) kills
// exactly the processes it started and never a recycled pid.
type process struct {
	name  string
	log   string // <state>/logs/<name>.log
	pid   int
	start string // field 22 of /proc/<pid>/stat
	cmd   *exec.Cmd
	done  chan struct{}
	// binary, args and env are how it was started, so Restart can start it again.
	binary string
	args   []string
	env    []string
}

const processesFile = "processes"

// startProcess runs binary with args, stdout and stderr to <state>/logs/<name>.log,
// in a session of its own so it can be signalled as a group. It dies with the
// process that started it (a test binary, however it ends), unless the cluster
// was started to outlive its caller (`localcluster up`, the demo).
func (c *Cluster) startProcess(name, binary string, args []string, env ...string) (*process, error) {
	logPath := filepath.Join(c.StateDir, "logs", name+".log")
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
	if !c.outliveCaller {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	fmt.Fprintf(logFile, "# %s %s\n", binary, strings.Join(args, " "))
	if err := startFromKeptThread(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, log: logPath, pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{}), binary: binary, args: args, env: env}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	p.start, _ = procStartTime(p.pid)
	c.procs = append(c.procs, p)
	if err := c.saveProcesses(); err != nil {
		return nil, err
	}
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

// StartProcess runs another program beside the control plane (the demo's
// exporter), logged under <state>/logs/<name>.log and stopped with it, also by
// `localcluster down`.
func (c *Cluster) StartProcess(name, binary string, args []string, env ...string) error {
	_, err := c.startProcess(name, binary, args, env...)
	return err
}

// Kill stops the named process as a crash would: SIGKILL to its group, by the pid this cluster
// recorded for it (never by name). It returns once the process has exited.
func (c *Cluster) Kill(name string) error {
	i := c.processIndex(name)
	if i < 0 {
		return fmt.Errorf("no process %q in this cluster", name)
	}
	p := c.procs[i]
	if p.exited() || !alive(p) {
		return fmt.Errorf("%s (pid %d) is not running", name, p.pid)
	}
	signal(p.pid, syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); !p.exited() && alive(p); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (pid %d) did not exit within 10s of SIGKILL", name, p.pid)
		}
	}
	return nil
}

// Restart starts a killed process again with the command that first started it, as its
// supervisor would, in its place in the stop order. Only this invocation's processes can be
// restarted (their commands are not recorded on disk).
func (c *Cluster) Restart(name string) error {
	i := c.processIndex(name)
	if i < 0 {
		return fmt.Errorf("no process %q in this cluster", name)
	}
	old := c.procs[i]
	if old.binary == "" {
		return fmt.Errorf("%s was started by another invocation; its command is not known here", name)
	}
	if !old.exited() && alive(old) {
		return fmt.Errorf("%s (pid %d) is still running; Kill it first", name, old.pid)
	}
	p, err := c.startProcess(name, old.binary, old.args, old.env...)
	if err != nil {
		return err
	}
	// startProcess appended it; put it back where the old one stood.
	c.procs = c.procs[:len(c.procs)-1]
	c.procs[i] = p
	return c.saveProcesses()
}

func (c *Cluster) processIndex(name string) int {
	for i, p := range c.procs {
		if p.name == name {
			return i
		}
	}
	return -1
}

// exited reports whether the process has stopped (only known for processes
// this invocation started).
func (p *process) exited() bool {
	if p.done == nil {
		return !alive(p)
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (c *Cluster) saveProcesses() error {
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "%s %d %s\n", p.name, p.pid, p.start)
	}
	return os.WriteFile(filepath.Join(c.StateDir, processesFile), []byte(b.String()), 0o644)
}

func loadProcesses(stateDir string) ([]*process, error) {
	f, err := os.Open(filepath.Join(stateDir, processesFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*process
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) != 3 {
			continue
		}
		pid, err := strconv.Atoi(fields[1])
		if err != nil {
			continue
		}
		out = append(out, &process{name: fields[0], log: filepath.Join(stateDir, "logs", fields[0]+".log"), pid: pid, start: fields[2]})
	}
	return out, s.Err()
}

// alive is true when pid still runs and is the same process we started.
func alive(p *process) bool {
	start, err := procStartTime(p.pid)
	return err == nil && start == p.start
}

// stopProcesses stops them in reverse start order: SIGTERM to the group, then
// SIGKILL after a grace period.
func stopProcesses(procs []*process, grace time.Duration) []error {
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		if p.exited() || !alive(p) {
			continue
		}
		signal(p.pid, syscall.SIGTERM)
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) && !p.exited() && alive(p) {
			time.Sleep(50 * time.Millisecond)
		}
		if !p.exited() && alive(p) {
			signal(p.pid, syscall.SIGKILL)
			time.Sleep(100 * time.Millisecond)
		}
		if p.done != nil {
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
				errs = append(errs, fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.pid))
			}
		} else if alive(p) {
			errs = append(errs, fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.pid))
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

func procStartTime(pid int) (string, error) {
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

// exitedError says that the named process exited, how (when this invocation
// started it), and quotes the end of its log: a test's state directory is
// removed with the test, so the log's tail must travel in the error.
func (c *Cluster) exitedError(name string) error {
	if p := c.proc(name); p != nil {
		return p.exitedError()
	}
	return fmt.Errorf("%s exited; the end of %s:\n%s", name, c.Log(name), logTail(c.Log(name), 20))
}

func (p *process) exitedError() error {
	how := "exited"
	if p.exited() && p.cmd != nil && p.cmd.ProcessState != nil {
		how = "exited (" + p.cmd.ProcessState.String() + ")"
	}
	return fmt.Errorf("%s %s; the end of %s:\n%s", p.name, how, p.log, logTail(p.log, 20))
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
