package exporter

import (
	"fmt"
	"time"
)

// Arrivals is a pool's arrival signal at one read: the claims created within the last short and
// long window before it.
type Arrivals struct {
	Short, Long             int64
	ShortWindow, LongWindow time.Duration
}

// maxRememberedArrivals bounds the arrival memory: as many claims as one read may list
// (maxRequestsPerRead pages of pageSize), about 10 MB of UIDs. More claims created within one long
// window fail the read (served stale) rather than grow the exporter without end.
const maxRememberedArrivals = maxRequestsPerRead * pageSize

// arrivalMemory remembers the creation time of every claim a read has seen that was created within
// the long window, keyed by UID, so a claim that was listed once and deleted before the next read
// still counts as an arrival until it leaves the window. A claim created and deleted between two
// reads is never seen; a restart forgets the claims deleted before its first read.
//
// Only one read of a pool runs at a time (the tracker's single flight), so it needs no lock.
type arrivalMemory struct {
	short, long time.Duration
	created     map[string]int64 // UID -> creationTimestamp, Unix seconds
	limit       int              // maxRememberedArrivals; tests lower it
}

func newArrivalMemory(short, long time.Duration) *arrivalMemory {
	return &arrivalMemory{short: short, long: long, created: map[string]int64{}, limit: maxRememberedArrivals}
}

// Times are compared in whole seconds, the resolution of creationTimestamp and of the API
// server's Date header: a claim is within a window W of now if it was created after now - W.

// see records one listed claim if it was created within the long window before now. A claim
// recorded by a read that then fails is still a true fact: it existed, created then.
func (m *arrivalMemory) see(uid string, created, now time.Time) error {
	c := created.Unix()
	if c <= now.Unix()-int64(m.long/time.Second) {
		return nil
	}
	if _, ok := m.created[uid]; !ok && len(m.created) >= m.limit {
		return fmt.Errorf("more than %d claims were created within the last %s; the exporter does not remember more "+
			"(shorten the long arrival window)", m.limit, m.long)
	}
	m.created[uid] = c
	return nil
}

// forget drops the claims created before the long window ending at now. A read calls it before it
// records any claim, so a memory at its limit frees itself as claims leave the window.
func (m *arrivalMemory) forget(now time.Time) {
	longFrom := now.Unix() - int64(m.long/time.Second)
	for uid, c := range m.created {
		if c <= longFrom {
			delete(m.created, uid)
		}
	}
}

// count forgets the claims created before the long window and counts the rest in each window.
// A creation time after now (the second it is truncated to, or a server's clock step) counts in
// both windows: the claim is recent.
func (m *arrivalMemory) count(now time.Time) Arrivals {
	m.forget(now)
	a := Arrivals{ShortWindow: m.short, LongWindow: m.long, Long: int64(len(m.created))}
	shortFrom := now.Unix() - int64(m.short/time.Second)
	for _, c := range m.created {
		if c > shortFrom {
			a.Short++
		}
	}
	return a
}
