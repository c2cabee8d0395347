package kubetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// CompactEtcd compacts etcd's history up to its current revision and returns
// that revision. Every resourceVersion older than it is then gone: a watch or
// a list resumed from one fails with 410 Gone ("too old resource version"),
// which makes a client-go reflector relist. Watches the apiserver serves from
// its watch cache are not affected until they are re-established; run the
// apiserver with --watch-cache=false (WithAPIServerFlags) to have watches read
// etcd directly, so that a watch cut after the compaction must relist.
//
// It speaks to etcd's JSON gateway over HTTPS with the etcd client
// certificate, so the test binary links no etcd or gRPC client whose
// goroutines would outlive the test.
func (e *Env) CompactEtcd(ctx context.Context) (int64, error) {
	if e == nil || e.EtcdURL == "" || e.pki == nil {
		return 0, errors.New("kubetest: CompactEtcd on an Env that is not running")
	}
	// A range read of any key reports the store's current revision in its header.
	var rangeResp struct {
		Header struct {
			Revision json.Number `json:"revision"`
		} `json:"header"`
	}
	if err := e.etcdCall(ctx, "/v3/kv/range", map[string]any{"key": "AA=="}, &rangeResp); err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(rangeResp.Header.Revision.String(), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("kubetest: etcd revision %q: %w", rangeResp.Header.Revision, err)
	}
	body := map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}
	if err := e.etcdCall(ctx, "/v3/kv/compaction", body, nil); err != nil {
		return 0, err
	}
	e.cfg.logf("kubetest: compacted etcd at revision %d", rev)
	return rev, nil
}

func (e *Env) etcdCall(ctx context.Context, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.EtcdURL+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: e.pki.etcdTLSConfig(), DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("kubetest: etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	payload, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("kubetest: etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("kubetest: etcd %s: %s: %s", path, resp.Status, payload)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(payload, out); err != nil {
		return fmt.Errorf("kubetest: etcd %s: decode %s: %w", path, payload, err)
	}
	return nil
}
