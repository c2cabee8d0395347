// Package objectcontrol is how controllers write the objects they own, of any
// kind: create (with or without a controller reference), delete and patch,
// with events, a deadline on every write, and a fake for tests.
//
// A Control holds the rules; a Writer does the three API calls and nothing
// else. TypedWriter adapts a client-go typed client, DynamicWriter the
// dynamic client (custom resources as *unstructured.Unstructured); package
// ctrlruntime/crclient has a Writer over a controller-runtime client.Client,
// and package podcontrol builds its pod control over the same Control, so
// every writer gets the same events, NotFound handling, event reasons,
// write hook and deadline:
//
//	services := objectcontrol.New("Service", objectcontrol.TypedWriter(
//		func(ns string) objectcontrol.TypedClient[*v1.Service] { return client.CoreV1().Services(ns) }),
//		recorder, types.StrategicMergePatchType)
//	svc, err := services.Create(ctx, owner.Namespace, svc, owner, metav1.NewControllerRef(owner, kind))
package objectcontrol
