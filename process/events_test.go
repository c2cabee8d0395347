package process

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestStartEvents: an event recorded reaches the API server, naming the
// component, and stop ends the broadcaster.
func TestStartEvents(t *testing.T) {
	client := fake.NewClientset()
	recorder, stop := StartEvents(context.Background(), client, "my-controller")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	recorder.Event(pod, v1.EventTypeNormal, "SuccessfulCreate", "Created pod: p")
	var got []v1.Event
	require.Eventually(t, func() bool {
		list, err := client.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		got = list.Items
		return len(got) == 1
	}, 10*time.Second, 10*time.Millisecond)
	stop()
	assert.Equal(t, "my-controller", got[0].Source.Component)
	assert.Equal(t, "SuccessfulCreate", got[0].Reason)
}
