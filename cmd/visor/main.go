// Command visor is Visor Fleet's one binary: the embedded dev stack, the
// production worker, and the CLI over the pool and cluster contract.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "visor:", errorText(err))
		os.Exit(1)
	}
}
