package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// requestAudit records, for one client, every write it made with its start
// and end time, and every request the apiserver refused with 403 Forbidden.
type requestAudit struct {
	mu        sync.Mutex
	writes    []writeRecord
	forbidden map[string]string // "VERB path" → the apiserver's message
	// excused is a window in which refusals are counted but not failures:
	// an apiserver that is starting denies requests until its authorizer's
	// caches have synced.
	excusedFrom, excusedTo time.Time
	excused                int
}

// excuse starts a window in which refusals are expected; endExcuse closes it.
func (a *requestAudit) excuse() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.excusedFrom, a.excusedTo = time.Now(), time.Time{}
}

func (a *requestAudit) endExcuse() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.excusedTo = time.Now()
}

// excusedCount is how many refusals fell in the excused window.
func (a *requestAudit) excusedCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.excused
}

type writeRecord struct {
	method, path string
	start, end   time.Time
	status       int // 0 when no response arrived
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func (a *requestAudit) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := rt.RoundTrip(req)
		end := time.Now()
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		if isWrite(req.Method) {
			a.mu.Lock()
			a.writes = append(a.writes, writeRecord{method: req.Method, path: req.URL.Path, start: start, end: end, status: status})
			a.mu.Unlock()
		}
		// 403 also answers a create over quota, which is not a permission.
		if status == http.StatusForbidden && !isQuotaRefusal(resp) {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			a.mu.Lock()
			if !a.excusedFrom.IsZero() && !start.Before(a.excusedFrom) && (a.excusedTo.IsZero() || start.Before(a.excusedTo)) {
				a.excused++
			} else {
				if a.forbidden == nil {
					a.forbidden = map[string]string{}
				}
				a.forbidden[req.Method+" "+genericPath(req.URL.Path)] = statusMessage(body)
			}
			a.mu.Unlock()
		}
		return resp, err
	})
}

// genericPath drops object names so one missing permission is reported once:
// /api/v1/namespaces/x/pods/web-abc → /api/v1/namespaces/x/pods/{name}.
func genericPath(p string) string {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		switch parts[i-1] {
		case "pods", "replicasets", "replicationcontrollers", "events", "leases":
			parts[i] = "{name}"
		}
	}
	return strings.Join(parts, "/")
}

// writesAfter returns the writes that had not finished at t.
func (a *requestAudit) writesAfter(t time.Time) []writeRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []writeRecord
	for _, w := range a.writes {
		if w.end.After(t) {
			out = append(out, w)
		}
	}
	return out
}

// lastWrite is when the client's last write finished.
func (a *requestAudit) lastWrite() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	var last time.Time
	for _, w := range a.writes {
		if w.end.After(last) {
			last = w.end
		}
	}
	return last
}

func (a *requestAudit) writeCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.writes)
}

// refusals lists the refused kinds of request with the apiserver's reasons.
func (a *requestAudit) refusals() []string {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.forbidden))
	for k, msg := range a.forbidden {
		out = append(out, k+": "+msg)
	}
	sort.Strings(out)
	return out
}

// check fails the test for every kind of request the apiserver refused: the
// controller's identity lacks a permission it uses.
func (a *requestAudit) check(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	keys := make([]string, 0, len(a.forbidden))
	for k := range a.forbidden {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("the controller was refused %s: %s", k, a.forbidden[k])
	}
}

func (w writeRecord) String() string {
	return fmt.Sprintf("%s %s [%s → %s] %d", w.method, w.path, w.start.Format("15:04:05.000000"), w.end.Format("15:04:05.000000"), w.status)
}

// statusMessage extracts the apiserver's explanation from a Status body in
// JSON or protobuf.
func statusMessage(body []byte) string {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &metav1.Status{})
	if status, ok := obj.(*metav1.Status); err == nil && ok {
		return status.Message
	}
	return strconv.QuoteToASCII(string(body))
}

// isQuotaRefusal reports whether a 403 is the ResourceQuota admission
// plugin's, keeping the body readable for the caller.
func isQuotaRefusal(resp *http.Response) bool {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return strings.Contains(statusMessage(body), "exceeded quota")
}
