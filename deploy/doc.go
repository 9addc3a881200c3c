// Package deploy holds gxbitd's deployment files: the container image
// (Dockerfile), Kubernetes manifests (k8s/), Prometheus scrape config and
// alert rules (prometheus/), a Grafana dashboard (grafana/) and a systemd
// unit (systemd/). It has no Go code; its tests parse and check every file,
// including that the metric names the rules and the dashboard use are ones
// gxbitd exports.
package deploy
