package deploy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service"
	"github.com/gxbit/gxbit/service/daemon"
)

// yamlLoader converts YAML files to JSON with python3's yaml module (Go has
// no YAML parser in the standard library, and the module takes no YAML
// dependency). The Debian image of this project's machines ships
// python3-yaml; elsewhere the YAML tests are skipped, saying why.
func loadYAML(t *testing.T, path string) []any {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3 not found (install python3-yaml to check %s): %v", path, err)
	}
	cmd := exec.Command(py, "-c", "import sys, json, yaml\njson.dump(list(yaml.safe_load_all(open(sys.argv[1]))), sys.stdout)", path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "No module named 'yaml'") {
			t.Skipf("python3 has no yaml module (install python3-yaml to check %s)", path)
		}
		t.Fatalf("parsing %s as YAML: %v\n%s", path, err, stderr.String())
	}
	var docs []any
	if err := json.Unmarshal(out, &docs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var kept []any
	for _, d := range docs {
		if d != nil {
			kept = append(kept, d)
		}
	}
	return kept
}

// get walks a decoded YAML/JSON value: keys for maps, integers for lists.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string {
	s, _ := get(v, path...).(string)
	return s
}

func num(v any, path ...any) float64 {
	f, _ := get(v, path...).(float64)
	return f
}

func list(v any, path ...any) []any {
	l, _ := get(v, path...).([]any)
	return l
}

func strs(v any, path ...any) []string {
	var out []string
	for _, e := range list(v, path...) {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

func noEnv(string) string { return "" }

// parseDaemonFlags checks args with gxbitd's own flag parser.
func parseDaemonFlags(t *testing.T, where string, args []string) daemon.Config {
	t.Helper()
	cfg, err := daemon.ParseFlags(args, noEnv, io.Discard)
	if err != nil {
		t.Fatalf("%s: gxbitd rejects %q: %v", where, args, err)
	}
	return cfg
}

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return n
}

// metricRE finds metric names in PromQL.
var metricRE = regexp.MustCompile(`\b(gxbit_[a-z0-9_]+|up)\b`)

// checkMetricNames fails for a metric the daemon does not export.
func checkMetricNames(t *testing.T, where, expr string) {
	t.Helper()
	known := map[string]bool{"up": true}
	for _, n := range service.MetricNames() {
		known[n] = true
	}
	names := metricRE.FindAllString(expr, -1)
	if len(names) == 0 {
		t.Errorf("%s: expression uses no gxbit metric: %s", where, expr)
	}
	for _, n := range names {
		base := n
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(n, suffix); ok && known[b] {
				base = b
			}
		}
		if !known[base] {
			t.Errorf("%s: metric %s is not exported by gxbitd (service.MetricNames)", where, n)
		}
	}
}

func TestKubernetesManifests(t *testing.T) {
	docs := map[string]any{} // kind/name -> object
	files, err := filepath.Glob("k8s/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	for _, f := range files {
		for _, d := range loadYAML(t, f) {
			kind, name := str(d, "kind"), str(d, "metadata", "name")
			if str(d, "apiVersion") == "" || kind == "" {
				t.Errorf("%s: a document without apiVersion or kind", f)
				continue
			}
			if kind == "Kustomization" {
				for _, r := range append(strs(d, "resources"), str(d, "patches", 0, "path")) {
					if r == "" {
						continue
					}
					if _, err := os.Stat(filepath.Join(filepath.Dir(f), r)); err != nil {
						t.Errorf("%s: resource %s: %v", f, r, err)
					}
				}
				continue
			}
			if name == "" {
				t.Errorf("%s: %s without metadata.name", f, kind)
			}
			key := kind + "/" + name
			switch {
			case strings.HasSuffix(f, "-gpu.yaml"):
				key += "#gpu"
			case strings.HasSuffix(f, "-cluster.yaml"):
				key += "#cluster"
			}
			docs[key] = d
		}
	}

	dep := docs["Deployment/gxbitd"]
	if dep == nil {
		t.Fatal("no Deployment gxbitd")
	}
	if num(dep, "spec", "replicas") != 1 || str(dep, "spec", "strategy", "type") != "Recreate" {
		t.Errorf("the base Deployment must have 1 replica and the Recreate strategy (one bbolt writer)")
	}
	pod := get(dep, "spec", "template")
	labels := get(pod, "metadata", "labels").(map[string]any)
	for k, v := range get(dep, "spec", "selector", "matchLabels").(map[string]any) {
		if labels[k] != v {
			t.Errorf("selector %s=%v does not match the pod labels %v", k, v, labels)
		}
	}
	c := get(pod, "spec", "containers", 0)
	cfg := parseDaemonFlags(t, "Deployment args", strs(c, "args"))
	ports := map[string]int{}
	for _, p := range list(c, "ports") {
		ports[str(p, "name")] = int(num(p, "containerPort"))
	}
	if ports["grpc"] != port(t, cfg.Listen) || ports["metrics"] != port(t, cfg.MetricsListen) {
		t.Errorf("container ports %v do not match --listen %s and --metrics-listen %s", ports, cfg.Listen, cfg.MetricsListen)
	}
	for _, probe := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
		if int(num(c, probe, "grpc", "port")) != port(t, cfg.Listen) {
			t.Errorf("%s is not a gRPC health probe on the gRPC port", probe)
		}
	}
	if s := str(c, "readinessProbe", "grpc", "service"); s != api.JobService_ServiceDesc.ServiceName {
		t.Errorf("readiness probe checks service %q, want %q", s, api.JobService_ServiceDesc.ServiceName)
	}
	ann := get(pod, "metadata", "annotations")
	if str(ann, "prometheus.io/scrape") != "true" || str(ann, "prometheus.io/port") != strconv.Itoa(port(t, cfg.MetricsListen)) || str(ann, "prometheus.io/path") != "/metrics" {
		t.Errorf("scrape annotations %v do not match --metrics-listen", ann)
	}
	if grace := time.Duration(num(pod, "spec", "terminationGracePeriodSeconds")) * time.Second; grace <= cfg.ShutdownGrace {
		t.Errorf("terminationGracePeriodSeconds %v must exceed --shutdown-grace %v", grace, cfg.ShutdownGrace)
	}
	if get(pod, "spec", "securityContext", "runAsNonRoot") != true || num(pod, "spec", "securityContext", "runAsUser") == 0 {
		t.Errorf("the pod must run as a non-root user")
	}
	if get(c, "securityContext", "allowPrivilegeEscalation") != false || get(c, "securityContext", "readOnlyRootFilesystem") != true {
		t.Errorf("the container must not escalate privileges and must have a read-only root")
	}
	mounts := map[string]string{}
	for _, m := range list(c, "volumeMounts") {
		mounts[str(m, "name")] = str(m, "mountPath")
	}
	var dataVolume string
	for name, path := range mounts {
		if path == cfg.DataDir {
			dataVolume = name
		}
	}
	if dataVolume == "" {
		t.Fatalf("no volume mounted at --data %s (mounts %v)", cfg.DataDir, mounts)
	}
	for _, v := range list(pod, "spec", "volumes") {
		if str(v, "name") == dataVolume {
			claim := str(v, "persistentVolumeClaim", "claimName")
			if docs["PersistentVolumeClaim/"+claim] == nil {
				t.Errorf("data volume claims %q, which no manifest defines", claim)
			}
		}
	}

	svc := docs["Service/gxbitd"]
	for k, v := range get(svc, "spec", "selector").(map[string]any) {
		if labels[k] != v {
			t.Errorf("Service selector %s=%v does not select the pod (%v)", k, v, labels)
		}
	}
	svcPorts := map[string]bool{}
	for _, p := range list(svc, "spec", "ports") {
		svcPorts[str(p, "name")] = true
		if _, ok := ports[str(p, "targetPort")]; !ok {
			t.Errorf("Service port %s targets %q, not a container port", str(p, "name"), str(p, "targetPort"))
		}
	}
	sm := docs["ServiceMonitor/gxbitd"]
	if sm == nil || !svcPorts[str(sm, "spec", "endpoints", 0, "port")] || str(sm, "spec", "endpoints", 0, "path") != "/metrics" {
		t.Errorf("the ServiceMonitor must scrape /metrics on a Service port: %v", sm)
	}
	for k, v := range get(sm, "spec", "selector", "matchLabels").(map[string]any) {
		if str(svc, "metadata", "labels", k) != v {
			t.Errorf("ServiceMonitor selector %s=%v does not select the Service", k, v)
		}
	}

	gpu := docs["Deployment/gxbitd#gpu"]
	if gpu == nil {
		t.Fatal("no GPU Deployment patch")
	}
	gc := get(gpu, "spec", "template", "spec", "containers", 0)
	gcfg := parseDaemonFlags(t, "GPU Deployment args", strs(gc, "args"))
	if gcfg.Manager.DefaultGPU != service.GPUCUDA || num(gc, "resources", "limits", "nvidia.com/gpu") != 1 || str(gc, "name") != str(c, "name") {
		t.Errorf("the GPU patch must set --gpu=cuda and request one nvidia.com/gpu for container %q", str(c, "name"))
	}
	checkClusterOverlay(t, docs, labels, ports)
}

// checkClusterOverlay checks the cluster overlay's patch: several replicas
// on a PostgreSQL store named by a Secret, TLS and tokens from Secrets
// mounted where the flags point, HTTP probes on the metrics port, no
// persistent volume, and a NetworkPolicy that selects the pods.
func checkClusterOverlay(t *testing.T, docs map[string]any, labels map[string]any, ports map[string]int) {
	dep := docs["Deployment/gxbitd#cluster"]
	if dep == nil {
		t.Fatal("no cluster Deployment patch (k8s/cluster/deployment-cluster.yaml)")
	}
	if num(dep, "spec", "replicas") < 2 || str(dep, "spec", "strategy", "type") != "RollingUpdate" {
		t.Errorf("the cluster overlay must run several replicas with a rolling update")
	}
	c := get(dep, "spec", "template", "spec", "containers", 0)
	env := map[string]any{}
	for _, e := range list(c, "env") {
		env[str(e, "name")] = get(e, "valueFrom")
	}
	if str(env["GXBIT_STORE"], "secretKeyRef", "name") == "" {
		t.Errorf("the cluster overlay must take GXBIT_STORE from a Secret")
	}
	getenv := func(k string) string {
		if k == "GXBIT_STORE" {
			return "postgres://gxbit@postgres:5432/gxbit"
		}
		return ""
	}
	cfg, err := daemon.ParseFlags(strs(c, "args"), getenv, io.Discard)
	if err != nil {
		t.Fatalf("cluster Deployment args: gxbitd rejects %q: %v", strs(c, "args"), err)
	}
	if !strings.HasPrefix(cfg.Store, "postgres://") || cfg.TLS.Cert == "" || cfg.AuthTokens == "" || cfg.InsecurePlaintext {
		t.Errorf("the cluster overlay must use the PostgreSQL store, TLS and tokens, and no --insecure-plaintext: %+v", cfg)
	}
	mounts := map[string]string{}
	for _, m := range list(c, "volumeMounts") {
		mounts[str(m, "name")] = str(m, "mountPath")
	}
	secrets := map[string]string{}
	for _, v := range list(dep, "spec", "template", "spec", "volumes") {
		if name := str(v, "secret", "secretName"); name != "" {
			secrets[str(v, "name")] = name
		}
		if str(v, "name") == "data" && (get(v, "persistentVolumeClaim") != nil || get(v, "emptyDir") == nil) {
			t.Errorf("the replicas' data volume must be an emptyDir, not a claim: %v", v)
		}
	}
	for _, file := range []string{cfg.TLS.Cert, cfg.TLS.Key, cfg.AuthTokens} {
		ok := false
		for vol, path := range mounts {
			if filepath.Dir(file) == path && secrets[vol] != "" {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s is not in a mounted Secret (mounts %v, secret volumes %v)", file, mounts, secrets)
		}
	}
	for _, probe := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
		if get(c, probe, "grpc") != nil || str(c, probe, "httpGet", "port") != "metrics" || ports["metrics"] != port(t, cfg.MetricsListen) {
			t.Errorf("%s must be an HTTP probe on the metrics port (gRPC probes speak no TLS)", probe)
		}
	}
	np := docs["NetworkPolicy/gxbitd"]
	if np == nil {
		t.Fatal("no NetworkPolicy gxbitd")
	}
	for k, v := range get(np, "spec", "podSelector", "matchLabels").(map[string]any) {
		if labels[k] != v {
			t.Errorf("the NetworkPolicy selects %s=%v, not the pods (%v)", k, v, labels)
		}
	}
	open := map[int]bool{}
	for _, in := range list(np, "spec", "ingress") {
		for _, p := range list(in, "ports") {
			open[int(num(p, "port"))] = true
		}
	}
	if !open[port(t, cfg.Listen)] || !open[port(t, cfg.MetricsListen)] {
		t.Errorf("the NetworkPolicy must let in the gRPC and metrics ports: %v", open)
	}
}

func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	type stage struct {
		from, name string
		lines      []string
	}
	var stages []*stage
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	var cont string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cont += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		line, cont = cont+line, ""
		word, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(word) {
		case "FROM":
			f := strings.Fields(rest)
			s := &stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
		case "ARG":
			if len(stages) == 0 {
				continue
			}
			fallthrough
		default:
			if len(stages) == 0 {
				t.Fatalf("instruction before FROM: %s", line)
			}
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, line)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("want a multi-stage build, got %d stages", len(stages))
	}
	build := stages[0]
	if !slices.ContainsFunc(build.lines, func(l string) bool {
		return strings.Contains(l, "CGO_ENABLED=0") && strings.Contains(l, "./cmd/gxbitd")
	}) {
		t.Errorf("the build stage must build ./cmd/gxbitd with CGO_ENABLED=0")
	}
	byName := map[string]*stage{}
	for _, s := range stages {
		byName[s.name] = s
	}
	for _, s := range stages[1:] {
		for s.name == "" && byName[s.from] != nil && len(s.lines) == 0 {
			s = byName[s.from] // "FROM static" at the end selects the default target
		}
		var user, entry string
		for _, l := range s.lines {
			if u, ok := strings.CutPrefix(l, "USER "); ok {
				user = u
			}
			if e, ok := strings.CutPrefix(l, "ENTRYPOINT "); ok {
				entry = e
			}
		}
		uid, _, _ := strings.Cut(user, ":")
		if n, err := strconv.Atoi(uid); err != nil || n == 0 {
			t.Errorf("stage %s: USER %q is not a numeric non-root user", s.name, user)
		}
		var argv []string
		if err := json.Unmarshal([]byte(entry), &argv); err != nil || len(argv) == 0 {
			t.Fatalf("stage %s: ENTRYPOINT %q is not an exec-form JSON array: %v", s.name, entry, err)
		}
		cfg := parseDaemonFlags(t, "Dockerfile stage "+s.name, argv[1:])
		if !strings.HasPrefix(cfg.Listen, ":") || !strings.HasPrefix(cfg.MetricsListen, ":") {
			t.Errorf("stage %s: a container must listen on all interfaces: %q %q", s.name, cfg.Listen, cfg.MetricsListen)
		}
		exposed := ""
		for _, l := range s.lines {
			if e, ok := strings.CutPrefix(l, "EXPOSE "); ok {
				exposed = e
			}
		}
		for _, a := range []string{cfg.Listen, cfg.MetricsListen} {
			if !slices.Contains(strings.Fields(exposed), strconv.Itoa(port(t, a))) {
				t.Errorf("stage %s: EXPOSE %q lacks the port of %s", s.name, exposed, a)
			}
		}
	}
}

func TestSystemdUnit(t *testing.T) {
	data, err := os.ReadFile("systemd/gxbitd.service")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]map[string][]string{}
	var cur string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			cur = line[1 : len(line)-1]
			sections[cur] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || cur == "" {
				t.Fatalf("line %d: %q is not Key=Value inside a section", i+1, line)
			}
			sections[cur][k] = append(sections[cur][k], v)
		}
	}
	for _, s := range []string{"Unit", "Service", "Install"} {
		if sections[s] == nil {
			t.Fatalf("no [%s] section", s)
		}
	}
	svc := sections["Service"]
	exec := strings.Fields(svc["ExecStart"][0])
	if !filepath.IsAbs(exec[0]) || filepath.Base(exec[0]) != "gxbitd" {
		t.Errorf("ExecStart %q must run gxbitd by absolute path", exec[0])
	}
	cfg := parseDaemonFlags(t, "ExecStart", exec[1:])
	stop, err := time.ParseDuration(svc["TimeoutStopSec"][0] + "s")
	if err != nil || stop <= cfg.ShutdownGrace {
		t.Errorf("TimeoutStopSec %v must exceed --shutdown-grace %v", svc["TimeoutStopSec"], cfg.ShutdownGrace)
	}
	if svc["KillSignal"][0] != "SIGTERM" || svc["Restart"] == nil || svc["DynamicUser"][0] != "yes" {
		t.Errorf("want KillSignal=SIGTERM, a Restart= policy and DynamicUser=yes")
	}
	if want := "/var/lib/" + svc["StateDirectory"][0]; cfg.DataDir != want {
		t.Errorf("--data %s is not the StateDirectory %s", cfg.DataDir, want)
	}
	if sections["Install"]["WantedBy"] == nil {
		t.Errorf("no WantedBy= in [Install]")
	}
}

// promtool runs promtool when it is installed (Debian package prometheus).
func promtool(t *testing.T, args ...string) {
	t.Helper()
	pt, err := exec.LookPath("promtool")
	if err != nil {
		t.Logf("promtool not found (apt-get install prometheus); skipping promtool %s", strings.Join(args, " "))
		return
	}
	out, err := exec.Command(pt, args...).CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestAlertRules(t *testing.T) {
	docs := loadYAML(t, "prometheus/alerts.yaml")
	if len(docs) != 1 {
		t.Fatalf("%d YAML documents, want 1", len(docs))
	}
	alerts := map[string]bool{}
	for _, g := range list(docs[0], "groups") {
		for _, r := range list(g, "rules") {
			name := str(r, "alert")
			alerts[name] = true
			if name == "" || str(r, "expr") == "" || str(r, "labels", "severity") == "" || str(r, "annotations", "summary") == "" {
				t.Errorf("rule %v needs alert, expr, labels.severity and annotations.summary", r)
			}
			checkMetricNames(t, "alert "+name, str(r, "expr"))
		}
	}
	for _, want := range []string{"GxbitJobFailureRateHigh", "GxbitFallbackRateHigh", "GxbitNoGPU", "GxbitQueueDeep", "GxbitLeaseExpired"} {
		if !alerts[want] {
			t.Errorf("no alert %s", want)
		}
	}
	promtool(t, "check", "rules", "prometheus/alerts.yaml")
	promtool(t, "test", "rules", "prometheus/alerts_test.yaml")
	promtool(t, "check", "config", "prometheus/scrape.yaml")
}

func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile("grafana/gxbit-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	if str(dash, "uid") == "" || str(dash, "title") == "" || num(dash, "schemaVersion") < 30 {
		t.Errorf("dashboard needs uid, title and a current schemaVersion")
	}
	if str(dash, "templating", "list", 0, "type") != "datasource" {
		t.Errorf("the first template variable must pick the Prometheus data source")
	}
	ids := map[float64]bool{}
	var exprs []string
	used := map[string]bool{}
	for _, p := range list(dash, "panels") {
		id := num(p, "id")
		if ids[id] {
			t.Errorf("panel id %v used twice", id)
		}
		ids[id] = true
		if x, w := num(p, "gridPos", "x"), num(p, "gridPos", "w"); w <= 0 || x+w > 24 {
			t.Errorf("panel %q: gridPos x %v w %v outside the 24 columns", str(p, "title"), x, w)
		}
		if str(p, "type") == "row" {
			continue
		}
		targets := list(p, "targets")
		if len(targets) == 0 {
			t.Errorf("panel %q has no queries", str(p, "title"))
		}
		for _, tg := range targets {
			e := str(tg, "expr")
			if str(tg, "datasource", "uid") != "${datasource}" {
				t.Errorf("panel %q: query does not use the ${datasource} variable", str(p, "title"))
			}
			checkMetricNames(t, "panel "+str(p, "title"), e)
			for _, n := range metricRE.FindAllString(e, -1) {
				used[n] = true
			}
			exprs = append(exprs, e)
		}
	}
	for _, want := range []string{"gxbit_accelerated_speedup_ratio_bucket", "gxbit_kernel_speedup_ratio_bucket", "gxbit_kernel_launches_total", "gxbit_fallbacks_total", "gxbit_lease_expiries_total", "gxbit_jobs_running"} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
	// promtool has no command that parses a bare expression, so check the
	// queries' PromQL as recording rules.
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range exprs {
		e = strings.ReplaceAll(e, "$__rate_interval", "5m")
		q, _ := json.Marshal(e)
		fmt.Fprintf(&b, "      - record: dashboard:query%d\n        expr: %s\n", i, q)
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, "check", "rules", f)
}
