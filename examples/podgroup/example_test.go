package podgroup_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ctrlkit/ctrlkit/examples/podgroup"
)

// Wiring the PodGroup controller to a cluster (with crd.yaml installed): a
// clientset and a pod informer for pods, a dynamic client and a dynamic
// informer for PodGroups. It needs a cluster, so it is compiled, not run.
func Example() {
	ctx := context.Background()
	cfg, err := rest.InClusterConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	pods := informers.NewSharedInformerFactory(client, 0)
	groups := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)

	c, err := podgroup.New(ctx, client, dyn, pods.Core().V1().Pods(), groups.ForResource(podgroup.Resource).Informer())
	if err != nil {
		fmt.Println(err)
		return
	}
	pods.Start(ctx.Done())
	groups.Start(ctx.Done())
	if err := c.Run(ctx); err != nil {
		fmt.Println(err)
	}
}
