package workqueue

import "math"

// DefaultPriority is the priority of items added through the plain API, and
// of AddWithOpts when AddOpts.Priority is nil.
const DefaultPriority = 0

// maxIdleLevels bounds how many empty priority levels are kept for reuse,
// so a caller cycling through many distinct priorities cannot grow memory.
const maxIdleLevels = 8

// level is the FIFO of ready items that share one priority.
type level struct {
	prio       int32
	head, tail int32
	n          int
}

// levelIndex returns the index of the level for prio, creating it when
// missing. Levels are sorted by descending priority; there are few of them,
// so a linear scan beats a map.
func (q *Queue[T]) levelIndex(prio int32) int {
	ls := q.levels
	for k := range ls {
		if ls[k].prio == prio {
			return k
		}
		if ls[k].prio < prio {
			q.levels = append(q.levels, level{})
			copy(q.levels[k+1:], q.levels[k:])
			q.levels[k] = level{prio: prio, head: nilIdx, tail: nilIdx}
			q.onNewLevel()
			return k
		}
	}
	q.levels = append(q.levels, level{prio: prio, head: nilIdx, tail: nilIdx})
	q.onNewLevel()
	return len(q.levels) - 1
}

// onNewLevel switches on ready-time stamps once a second priority exists:
// ageing needs them, and a single-priority queue without metrics never
// pays for a clock read. Items that became ready before count as ready now.
func (q *Queue[T]) onNewLevel() {
	if len(q.levels) < 2 || q.stamp || q.ageing <= 0 {
		return
	}
	q.stamp = true
	q.stampSince = q.now()
}

// pushReady appends node i to the tail of its priority level.
func (q *Queue[T]) pushReady(i int32, n *node[T]) {
	k := q.levelIndex(n.prio)
	l := &q.levels[k]
	n.state |= stQueued
	n.prev, n.next = l.tail, nilIdx
	if l.tail == nilIdx {
		l.head = i
		q.nonEmpty++
	} else {
		q.s.at(l.tail).next = i
	}
	l.tail = i
	l.n++
	q.queued++
}

// unlinkReady removes node i from its level.
func (q *Queue[T]) unlinkReady(i int32, n *node[T]) {
	k := q.levelIndex(n.prio)
	l := &q.levels[k]
	if n.prev == nilIdx {
		l.head = n.next
	} else {
		q.s.at(n.prev).next = n.next
	}
	if n.next == nilIdx {
		l.tail = n.prev
	} else {
		q.s.at(n.next).prev = n.prev
	}
	n.prev, n.next = nilIdx, nilIdx
	n.state &^= stQueued
	l.n--
	q.queued--
	if l.n == 0 {
		q.nonEmpty--
		if len(q.levels) > maxIdleLevels {
			q.levels = append(q.levels[:k], q.levels[k+1:]...)
		}
	}
}

// popReady picks the next item to hand out: the head of the highest
// non-empty level, unless ageing promotes an older head of a lower level.
func (q *Queue[T]) popReady() (int32, *node[T]) {
	k := 0
	for q.levels[k].n == 0 {
		k++
	}
	if q.nonEmpty > 1 && q.ageing > 0 {
		k = q.agedLevel(k)
	}
	i := q.levels[k].head
	n := q.s.at(i)
	q.unlinkReady(i, n)
	return i, n
}

// agedLevel returns the level whose head has waited longest beyond the
// ageing limit, or top when no head is overdue. Within a level the head is
// the oldest, so looking at heads is enough.
func (q *Queue[T]) agedLevel(top int) int {
	limit := q.now() - int64(q.ageing)
	best, bestT := top, int64(math.MaxInt64)
	for k := top; k < len(q.levels); k++ {
		l := &q.levels[k]
		if l.n == 0 {
			continue
		}
		if t := max(q.s.at(l.head).t1, q.stampSince); t <= limit && t < bestT {
			best, bestT = k, t
		}
	}
	return best
}
