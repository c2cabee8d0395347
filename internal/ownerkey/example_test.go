package ownerkey_test

import (
	"fmt"

	"github.com/ctrlkit/ctrlkit/internal/ownerkey"
)

func Example() {
	key := ownerkey.Join("default", "web", "0d5c")
	ns, name, uid, err := ownerkey.Parse(key)
	fmt.Println(key, ns, name, uid, err)
	_, _, _, err = ownerkey.Parse(key + "/worker/pods")
	fmt.Println(err)
	// Output:
	// default/web@0d5c default web 0d5c <nil>
	// UID contains '/', '@' or '#'
}
