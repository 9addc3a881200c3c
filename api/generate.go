// Package api holds the gxbit.v1 gRPC service definition (gxbit.proto) and the
// Go code generated from it: the wire types and the client and server stubs
// that gxbitd and the gxbit CLI share.
//
// The generated files are committed. Regenerate them with `go generate ./api`,
// which runs gen.sh; gen.sh pins the protoc and plugin versions, and CI checks
// that regeneration leaves no diff.
package api

//go:generate bash gen.sh
