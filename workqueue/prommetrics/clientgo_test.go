package prommetrics

import cgworkqueue "k8s.io/client-go/util/workqueue"

func newClientGoQueue(p *Provider) cgworkqueue.TypedInterface[string] {
	return cgworkqueue.NewTypedWithConfig(cgworkqueue.TypedQueueConfig[string]{Name: "clientgo", MetricsProvider: p})
}
