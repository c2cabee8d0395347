package kubetest

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestStartStop starts a control plane twice in a row (the first start may
// include the cold build, the second is always warm), uses it, and checks that
// Stop leaves no process, port, directory or goroutine behind.
func TestStartStop(t *testing.T) {
	for _, name := range []string{"first", "second"} {
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
			defer cancel()

			env, err := Start(ctx, WithLogf(t.Logf))
			require.NoError(t, err)
			t.Logf("start took %s", env.StartDuration)

			cfg, closeIdle, err := env.ClientConfig(nil)
			require.NoError(t, err)
			defer closeIdle()
			client, err := kubernetes.NewForConfig(cfg)
			require.NoError(t, err)
			ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kubetest-"}}, metav1.CreateOptions{})
			require.NoError(t, err)
			// A pod with no service account is admitted because the
			// ServiceAccount admission plugin is off.
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			}
			_, err = client.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{})
			require.NoError(t, err)
			version, err := client.Discovery().ServerVersion()
			require.NoError(t, err)
			assert.Regexp(t, `^v1\.\d+\.\d+`, version.GitVersion)

			etcdPid, apiPid := env.etcd.cmd.Process.Pid, env.apiserver.cmd.Process.Pid
			ports := append([]int(nil), env.ports...)
			dir := env.Dir

			require.NoError(t, env.Stop())
			require.NoError(t, env.Stop(), "a second Stop returns the first result")
			for _, pid := range []int{etcdPid, apiPid} {
				_, err := os.Stat("/proc/" + strconv.Itoa(pid))
				assert.True(t, os.IsNotExist(err), "process %d still exists", pid)
			}
			for _, port := range ports {
				assert.True(t, portClosed(port), "port %d still open", port)
			}
			_, err = os.Stat(dir)
			assert.True(t, os.IsNotExist(err), "%s not removed", dir)
		})
	}
}
