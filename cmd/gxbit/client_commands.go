package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gxbit/gxbit/service/client"
)

// clientContext is cancelled by SIGINT or SIGTERM, so that `gxbit submit`
// cancels its job on Ctrl-C.
func clientContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// cmdSubmit runs `gxbit submit [flags] PROG [ARGS...]` and returns the
// guest's exit status (see package service/client for the others).
func cmdSubmit(args []string) int {
	ctx, stop := clientContext()
	defer stop()
	return client.Submit(ctx, args, client.StdIO())
}

// cmdJobs runs `gxbit jobs [flags]`.
func cmdJobs(args []string) int {
	ctx, stop := clientContext()
	defer stop()
	return client.Jobs(ctx, args, client.StdIO())
}

// cmdJob runs `gxbit job [flags] ID`.
func cmdJob(args []string) int {
	ctx, stop := clientContext()
	defer stop()
	return client.Job(ctx, args, client.StdIO())
}

// cmdCancel runs `gxbit cancel [flags] ID...`.
func cmdCancel(args []string) int {
	ctx, stop := clientContext()
	defer stop()
	return client.Cancel(ctx, args, client.StdIO())
}

// cmdFetch runs `gxbit fetch [flags] ID`.
func cmdFetch(args []string) int {
	ctx, stop := clientContext()
	defer stop()
	return client.Fetch(ctx, args, client.StdIO())
}
