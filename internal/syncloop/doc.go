// Package syncloop runs a controller's workers: it hands owner keys from a
// rate-limited work queue to a reconcile function and puts each key back by
// what the reconcile returned. childset's and podset's client-go drivers
// are both this loop, so they stop, drain and retry alike.
//
//	loop := &syncloop.Loop{Queue: q, Limiter: rl, Reconcile: r.Reconcile, Workers: 5}
//	go loop.Run(ctx) // until ctx is done, or loop.Drain()
package syncloop
