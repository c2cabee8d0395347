package writedeadline_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ctrlkit/ctrlkit/internal/writedeadline"
)

func ExampleDo() {
	stuck := make(chan struct{})
	defer close(stuck)
	err := writedeadline.Do(context.Background(), 10*time.Millisecond, "creating pod ns/p", func(context.Context) error {
		<-stuck // a writer that ignores its context
		return nil
	})
	fmt.Println(err, errors.Is(err, context.DeadlineExceeded))
	// Output: creating pod ns/p: no answer within 10ms: context deadline exceeded true
}
