module github.com/gxbit/gxbit

go 1.26.8

require (
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/arch v0.32.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/term v0.47.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/grpc v1.85.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
