package expectations

// Creation tracking by name closes upstream TODO #22599. Counting alone
// cannot tell an expected creation from an unrelated one (a user creating a
// matching pod, or the same add event delivered twice after a relist), and
// either lowers the count early. When the controller chooses the names of what
// it creates, it can expect those names instead: only an expected name lowers
// the count, and only once.

// ExpectCreationsNamed replaces the record for key with one expecting the
// creation of each distinct name in names (duplicates collapse) and no
// deletions. An empty slice yields a record that is fulfilled at once. The
// error is always nil.
func (c *ControllerExpectations) ExpectCreationsNamed(key string, names []string) error {
	set := make(map[string]struct{}, len(names))
	for _, n := range names {
		set[n] = struct{}{}
	}
	c.store(key, int64(len(set)), 0, set)
	return nil
}

// CreationObservedNamed records the creation of name for key. On a record set
// by ExpectCreationsNamed it lowers add by one only if name is still expected,
// and forgets name, so a repeated or unexpected name changes nothing. On a
// record set by counts alone it behaves like CreationObserved, which lets the
// same informer handler serve both kinds of record. Unknown keys are ignored.
//
// CreationObserved on a named record lowers the count unconditionally, as
// upstream does; use CreationObservedNamed consistently for named records.
func (c *ControllerExpectations) CreationObservedNamed(key, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, _ := c.records.Get(key)
	if rec == nil {
		return
	}
	if rec.names != nil {
		if _, ok := rec.names[name]; !ok {
			return
		}
		delete(rec.names, name)
	}
	rec.Add(-1, 0)
}
