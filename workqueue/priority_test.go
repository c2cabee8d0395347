package workqueue

import (
	"k8s.io/utils/ptr"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type op struct {
	item  string
	prio  int
	after time.Duration
}

func drain(q *Queue[string]) []string {
	var out []string
	for q.Len() > 0 {
		item, _ := q.Get()
		out = append(out, item)
		q.Done(item)
	}
	return out
}

func TestPriorityOrder(t *testing.T) {
	tests := []struct {
		name string
		ops  []op
		want []string
	}{
		{"fifo at one priority", []op{{"a", 0, 0}, {"b", 0, 0}, {"c", 0, 0}}, []string{"a", "b", "c"}},
		{"higher first", []op{{"low", -100, 0}, {"mid", 0, 0}, {"high", 10, 0}}, []string{"high", "mid", "low"}},
		{"fifo within levels", []op{{"l1", -1, 0}, {"h1", 1, 0}, {"l2", -1, 0}, {"h2", 1, 0}}, []string{"h1", "h2", "l1", "l2"}},
		{"re-add raises and goes to the tail of the new level",
			[]op{{"a", 0, 0}, {"b", 5, 0}, {"a", 5, 0}, {"c", 5, 0}}, []string{"b", "a", "c"}},
		{"re-add with lower priority keeps the higher",
			[]op{{"a", 5, 0}, {"b", 0, 0}, {"a", -5, 0}}, []string{"a", "b"}},
		{"add pulls a waiting item forward at the max priority",
			[]op{{"a", 0, 0}, {"w", 7, time.Hour}, {"w", 0, 0}}, []string{"w", "a"}},
		{"add-after of a ready item raises its priority",
			[]op{{"a", 0, 0}, {"b", 0, 0}, {"b", 3, time.Hour}}, []string{"b", "a"}},
		{"extreme priorities are clamped, not wrapped",
			[]op{{"min", math.MinInt, 0}, {"max", math.MaxInt, 0}, {"zero", 0, 0}}, []string{"max", "zero", "min"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newFakeQueue[string](t)
			for _, o := range tc.ops {
				if o.after > 0 {
					q.AddWithOpts(AddOpts{After: o.after, Priority: ptr.To(o.prio)}, o.item)
				} else {
					q.AddWithOpts(AddOpts{Priority: ptr.To(o.prio)}, o.item)
				}
				q.checkInvariants(t)
			}
			assert.Equal(t, tc.want, drain(q))
		})
	}
}

func TestWaitingItemKeepsMaxPriorityAndMinDeadline(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.AddWithOpts(AddOpts{After: time.Minute, Priority: ptr.To(10)}, "x")
	q.AddWithOpts(AddOpts{After: time.Second, Priority: ptr.To(1)}, "x")
	at, ok := q.Deadline("x")
	assert.True(t, ok)
	assert.Equal(t, time.Second, at.Sub(c.Now()))
	q.Add("y")
	c.Step(time.Second)
	waitLen(t, q, 2)
	item, prio, _ := q.GetWithPriority()
	assert.Equal(t, "x", item)
	assert.Equal(t, 10, prio)
}

func TestGetWithPriorityReportsDefault(t *testing.T) {
	q := New[string]()
	q.Add("a")
	item, prio, quit := q.GetWithPriority()
	assert.Equal(t, "a", item)
	assert.Equal(t, DefaultPriority, prio)
	assert.False(t, quit)
}

func TestManyPriorityLevelsStayBounded(t *testing.T) {
	q := New[int]()
	for i := range 1000 {
		q.AddWithOpts(AddOpts{Priority: ptr.To(i)}, i)
		item, _ := q.Get()
		q.Done(item)
	}
	assert.LessOrEqual(t, len(q.levels), maxIdleLevels+1)
	q.checkInvariants(t)
}
