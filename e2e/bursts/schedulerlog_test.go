package bursts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kube-scheduler's log of two freed slots in namespace a: the rule, given each pod's failures
// from the log, picks who took each.
func TestSchedulerLogChoices(t *testing.T) {
	var log strings.Builder
	line := func(at float64, msg, kv string) {
		h, m, s := int(at)/3600, int(at)%3600/60, at-float64(int(at)/60*60)
		fmt.Fprintf(&log, "I1208 %02d:%02d:%09.6f   25193 somefile.go:1] %q %s\n", 10+h, m, s, msg, kv)
	}
	moved := func(at float64, pod, event string) {
		line(at, "Pod moved to an internal scheduling queue", fmt.Sprintf("pod=%q event=%q queue=\"Backoff\"", pod, event))
	}
	bound := func(at float64, pod string) {
		line(at, "Successfully bound pod to node", fmt.Sprintf("pod=%q node=\"n1\"", pod))
	}
	moved(0, "a/old", "UnschedulablePodAdd")
	moved(0.001, "a/old", "ScheduleAttemptFailure")
	for _, at := range []float64{5, 10, 15} { // other pods deleted: old fails each time, backoff 8 s
		moved(at, "a/old", "AssignedPodDelete")
		moved(at+0.001, "a/old", "ScheduleAttemptFailure")
	}
	moved(20, "a/new", "UnschedulablePodAdd")
	moved(20.001, "a/new", "ScheduleAttemptFailure")
	moved(20.5, "b/elsewhere", "UnschedulablePodAdd")
	moved(20.501, "b/elsewhere", "ScheduleAttemptFailure")
	fmt.Fprintln(&log, "not a log line")
	// 21.5 s: a pod deleted; new's backoff is over (21 s), old's is not (23 s): new takes the slot.
	for _, p := range []string{"a/old", "a/new", "b/elsewhere"} {
		moved(21.5, p, "AssignedPodDelete")
	}
	bound(21.52, "a/new")
	moved(21.53, "a/old", "ScheduleAttemptFailure")
	moved(21.54, "b/elsewhere", "ScheduleAttemptFailure")
	moved(30, "a/third", "UnschedulablePodAdd")
	moved(30.001, "a/third", "ScheduleAttemptFailure")
	// 40 s: both over their backoff; old failed longer ago (21.53 s) and takes it.
	moved(40, "a/third", "AssignedPodDelete")
	moved(40, "a/old", "AssignedPodDelete")
	bound(40.02, "a/old")
	// a node added, not a freed slot: not counted
	moved(41, "a/third", "NodeAdd")
	moved(41, "b/elsewhere", "NodeAdd")
	bound(41.01, "a/third")

	got, err := SchedulerLogChoices(strings.NewReader(log.String()))
	require.NoError(t, err)
	assert.Equal(t, 2, got.Slots, "two slots freed by a deletion, two of a's pods pending at each")
	assert.Equal(t, 2, got.Backoff, "the rule picks new, then old")
	assert.Equal(t, 1, got.Oldest, "first come picks old twice, right the second time")
	assert.Equal(t, 1, got.Newest, "the newest: new, then third")
	assert.InDelta(t, 1.0, got.Chance, 1e-9)

	_, err = SchedulerLogChoices(strings.NewReader("I1208 23:59:59.000000   1 f.go:1] \"x\"\nI1209 00:00:01.000000   1 f.go:1] \"x\"\n"))
	assert.ErrorContains(t, err, "across midnight")
}
