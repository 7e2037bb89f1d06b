package process

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// recordFile, in the state directory, holds one line per process: name, pid,
// start time. Teardown, possibly from another invocation (`localcluster
// down`), kills exactly those.
const recordFile = "processes"

// Set is the processes of one control plane, in start order (the reverse of
// the stop order), recorded under its state directory.
type Set struct {
	stateDir string
	// outliveCaller keeps the processes running when the caller dies
	// (`localcluster up`, the demo); by default they die with it.
	outliveCaller bool
	procs         []*Process
}

// NewSet is an empty set recording under stateDir.
func NewSet(stateDir string, outliveCaller bool) *Set {
	return &Set{stateDir: stateDir, outliveCaller: outliveCaller}
}

// Load reads the processes recorded under stateDir (started by this or
// another invocation).
func Load(stateDir string) (*Set, error) {
	f, err := os.Open(filepath.Join(stateDir, recordFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &Set{stateDir: stateDir}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue
		}
		pid, err := strconv.Atoi(fields[1])
		if err != nil {
			continue
		}
		p := Recorded(fields[0], pid, fields[2])
		p.Log = s.LogPath(p.Name)
		s.procs = append(s.procs, p)
	}
	return s, sc.Err()
}

// RecordedIn reports whether stateDir holds a record of processes.
func RecordedIn(stateDir string) bool {
	_, err := os.Stat(filepath.Join(stateDir, recordFile))
	return err == nil
}

// LogPath is where the named process logs: <state>/logs/<name>.log.
func (s *Set) LogPath(name string) string { return LogPath(s.stateDir, name) }

// LogPath is where a process named name of the control plane in stateDir logs.
func LogPath(stateDir, name string) string { return filepath.Join(stateDir, "logs", name+".log") }

// Start runs binary with args (and env added to this process's environment),
// records it, and returns it.
func (s *Set) Start(name, binary string, args []string, env ...string) (*Process, error) {
	p, err := start(name, s.LogPath(name), binary, args, env, s.outliveCaller)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return p, s.save()
}

// Get is the named process, or nil.
func (s *Set) Get(name string) *Process {
	if i := s.index(name); i >= 0 {
		return s.procs[i]
	}
	return nil
}

// All is every process, in start order.
func (s *Set) All() []*Process { return s.procs }

// Kill stops the named process as a crash would (SIGKILL to its group), by the
// pid recorded for it. It returns once the process has exited.
func (s *Set) Kill(name string) error {
	p := s.Get(name)
	if p == nil {
		return fmt.Errorf("no process %q in this cluster", name)
	}
	return p.kill()
}

// Restart starts a killed process again with the command that first started
// it, as its supervisor would, in its place in the stop order. Only this
// invocation's processes can be restarted (their commands are not recorded on
// disk).
func (s *Set) Restart(name string) error {
	i := s.index(name)
	if i < 0 {
		return fmt.Errorf("no process %q in this cluster", name)
	}
	old := s.procs[i]
	if old.Binary == "" {
		return fmt.Errorf("%s was started by another invocation; its command is not known here", name)
	}
	if old.Running() {
		return fmt.Errorf("%s (pid %d) is still running; Kill it first", name, old.Pid)
	}
	p, err := start(name, old.Log, old.Binary, old.Args, old.Env, s.outliveCaller)
	if err != nil {
		return err
	}
	s.procs[i] = p
	return s.save()
}

// Running reports whether every process still runs, and names those that do not.
func (s *Set) Running() (bool, []string) {
	var dead []string
	for _, p := range s.procs {
		if !p.Running() {
			dead = append(dead, p.Name)
		}
	}
	return len(dead) == 0, dead
}

// AnyAlive is true when any recorded process still runs.
func (s *Set) AnyAlive() bool {
	for _, p := range s.procs {
		if p.Alive() {
			return true
		}
	}
	return false
}

// ExitedError says the named process exited, with the end of its log.
func (s *Set) ExitedError(name string) error {
	if p := s.Get(name); p != nil {
		return p.ExitedError()
	}
	return fmt.Errorf("%s exited; the end of %s:\n%s", name, s.LogPath(name), logTail(s.LogPath(name), 20))
}

// Stop stops every process in reverse start order (SIGTERM, then SIGKILL
// after grace). The record stays until RemoveRecord: a teardown that fails
// later can be run again from it.
func (s *Set) Stop(grace time.Duration) []error {
	errs := Stop(s.procs, grace)
	s.procs = nil
	return errs
}

// RemoveRecord removes the record of the processes, once nothing of them is left to undo.
func (s *Set) RemoveRecord() error {
	if err := os.Remove(filepath.Join(s.stateDir, recordFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Forget drops every process from the set without stopping any (a test that
// killed them itself and leaves the cleanup to the next start).
func (s *Set) Forget() { s.procs = nil }

func (s *Set) index(name string) int {
	for i, p := range s.procs {
		if p.Name == name {
			return i
		}
	}
	return -1
}

func (s *Set) save() error {
	var b strings.Builder
	for _, p := range s.procs {
		fmt.Fprintf(&b, "%s %d %s\n", p.Name, p.Pid, p.Start)
	}
	return os.WriteFile(filepath.Join(s.stateDir, recordFile), []byte(b.String()), 0o644)
}
