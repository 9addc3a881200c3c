package daemon

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/gxbit/gxbit/api"
	"github.com/gxbit/gxbit/service/client"
	"github.com/gxbit/gxbit/service/internal/elftest"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
	file string // the CA certificate, PEM
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gxbit test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, dir: t.TempDir()}
	ca.file = filepath.Join(ca.dir, "ca.pem")
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

var serial int64 = 100

// issue makes a certificate named cn (a server certificate for localhost
// and 127.0.0.1, or a client one) and returns its certificate and key files.
func (ca *testCA) issue(t *testing.T, cn string, server bool) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = filepath.Join(ca.dir, cn+".pem")
	keyFile = filepath.Join(ca.dir, cn+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

const (
	aliceToken = "alice-0123456789abcdef"
	bobToken   = "bob-0123456789abcdef00"
	adminToken = "admin-0123456789abcdef"
)

// connect dials the daemon with a client.Connection, as the CLI does.
func connect(t *testing.T, addr string, c client.Connection) *grpc.ClientConn {
	t.Helper()
	opts, err := c.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// TestAuthAndTLS serves over TLS with a CA made here and checks tokens:
// calls without a token or with a wrong one, on another user's job, and
// from a plaintext client are refused with the right code; an admin sees
// every job; health stays open; reflection needs a token; the token file
// and the certificate are reloaded when they change.
func TestAuthAndTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ca := newTestCA(t)
	certFile, keyFile := ca.issue(t, "gxbitd", true)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("# TOKEN NAME ROLE\n"+aliceToken+" alice submit\n"+bobToken+" bob submit\n\n"+adminToken+" root admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t.TempDir())
	cfg.TLS.Cert, cfg.TLS.Key = certFile, keyFile
	cfg.AuthTokens = tokens
	td := startDaemon(t, cfg, &fakeExecutor{})
	prog := writeProg(t, elftest.Build(elftest.Options{}))

	as := func(token string) client.Connection { return client.Connection{Token: token, CA: ca.file} }
	alice := api.NewJobServiceClient(connect(t, td.addr, as(aliceToken)))
	bob := api.NewJobServiceClient(connect(t, td.addr, as(bobToken)))
	admin := api.NewJobServiceClient(connect(t, td.addr, as(adminToken)))
	anon := api.NewJobServiceClient(connect(t, td.addr, client.Connection{CA: ca.file}))
	wrong := api.NewJobServiceClient(connect(t, td.addr, as("mallory-0123456789abcdef")))

	// The CLI with --token and --ca: TLS is implied.
	rc, out, errOut := runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--token", aliceToken, "--ca", ca.file, "--json", prog, "exit=3")
	if rc != 3 {
		t.Fatalf("alice's submit: rc %d, stderr %s", rc, errOut)
	}
	aliceJob := parseJob(t, out)
	if aliceJob.GetOwner() != "alice" {
		t.Errorf("alice's job has owner %q", aliceJob.GetOwner())
	}
	id := aliceJob.GetId()
	rc, out, errOut = runCLI(ctx, client.Submit, false, "", "--server", td.addr, "--token", bobToken, "--ca", ca.file, "--json", prog)
	if rc != 0 {
		t.Fatalf("bob's submit: rc %d, stderr %s", rc, errOut)
	}
	bobID := parseJob(t, out).GetId()

	code := func(err error) codes.Code { return status.Code(err) }
	if _, err := anon.ListJobs(ctx, &api.ListJobsRequest{}); code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "requires a token") {
		t.Errorf("no token: %v", err)
	}
	if _, err := wrong.GetJob(ctx, &api.GetJobRequest{JobId: id}); code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "not valid") {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := bob.GetJob(ctx, &api.GetJobRequest{JobId: id}); code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "belongs to another user") {
		t.Errorf("bob gets alice's job: %v", err)
	}
	if _, err := bob.CancelJob(ctx, &api.CancelJobRequest{JobId: id}); code(err) != codes.PermissionDenied {
		t.Errorf("bob cancels alice's job: %v", err)
	}
	ws, err := bob.WatchJob(ctx, &api.WatchJobRequest{JobId: id})
	if err == nil {
		_, err = ws.Recv()
	}
	if code(err) != codes.PermissionDenied {
		t.Errorf("bob watches alice's job: %v", err)
	}
	as2, err := bob.GetArtifact(ctx, &api.GetArtifactRequest{JobId: id, Name: "report.json"})
	if err == nil {
		_, err = as2.Recv()
	}
	if code(err) != codes.PermissionDenied {
		t.Errorf("bob fetches alice's report: %v", err)
	}
	rc, _, errOut = runCLI(ctx, client.Job, false, "", "--server", td.addr, "--token", bobToken, "--ca", ca.file, id)
	if rc != client.ExitError || !strings.Contains(errOut, "PermissionDenied") {
		t.Errorf("gxbit job as bob: rc %d, %q", rc, errOut)
	}
	list := func(cl api.JobServiceClient) []string {
		t.Helper()
		resp, err := cl.ListJobs(ctx, &api.ListJobsRequest{})
		if err != nil {
			t.Fatalf("ListJobs: %v", err)
		}
		var ids []string
		for _, j := range resp.GetJobs() {
			ids = append(ids, j.GetId())
		}
		return ids
	}
	if got := list(bob); len(got) != 1 || got[0] != bobID {
		t.Errorf("bob lists %v, want only %s", got, bobID)
	}
	if got := list(admin); len(got) != 2 {
		t.Errorf("admin lists %v, want both jobs", got)
	}
	if _, err := admin.GetJob(ctx, &api.GetJobRequest{JobId: id}); err != nil {
		t.Errorf("admin gets alice's job: %v", err)
	}
	if _, err := alice.GetJob(ctx, &api.GetJobRequest{JobId: id}); err != nil {
		t.Errorf("alice gets her job: %v", err)
	}

	// A plaintext client cannot talk to the TLS server.
	pc, err := grpc.NewClient(td.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
	_, err = api.NewJobServiceClient(pc).ListJobs(pctx, &api.ListJobsRequest{})
	pcancel()
	if c := code(err); c != codes.Unavailable && c != codes.DeadlineExceeded {
		t.Errorf("plaintext client against TLS: %v", err)
	}
	rc, _, errOut = runCLI(ctx, client.Jobs, false, "", "--server", td.addr, "--token", aliceToken, "--insecure-plaintext")
	if rc != client.ExitError || !strings.Contains(errOut, "Unavailable") {
		t.Errorf("gxbit jobs --insecure-plaintext against TLS: rc %d, %q", rc, errOut)
	}

	// Health is open; reflection is not.
	tc := connect(t, td.addr, client.Connection{CA: ca.file})
	if resp, err := healthpb.NewHealthClient(tc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without a token: %v, %v", resp, err)
	}
	rs, err := reflectionpb.NewServerReflectionClient(tc).ServerReflectionInfo(ctx)
	if err == nil {
		// Send may fail with io.EOF once the server has refused the
		// stream; Recv then returns the status.
		rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
		_, err = rs.Recv()
	}
	if code(err) != codes.Unauthenticated {
		t.Errorf("reflection without a token: %v", err)
	}

	// A user added to the token file can call once it is read again;
	// tokens are re-read at most once a second.
	const carolToken = "carol-0123456789abcdef"
	f, err := os.OpenFile(tokens, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, carolToken+" carol submit\n")
	f.Close()
	carol := api.NewJobServiceClient(connect(t, td.addr, as(carolToken)))
	waitFor(t, "carol's token to be accepted", func() bool {
		_, err := carol.ListJobs(ctx, &api.ListJobsRequest{})
		return err == nil
	})

	// A new certificate in the same files is served to new connections.
	newCert, newKey := ca.issue(t, "gxbitd-renewed", true)
	for _, p := range [][2]string{{newCert, certFile}, {newKey, keyFile}} {
		data, _ := os.ReadFile(p[0])
		if err := os.WriteFile(p[1], data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	waitFor(t, "the renewed certificate", func() bool {
		c, err := tls.Dial("tcp", td.addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
		if err != nil {
			return false
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName == "gxbitd-renewed"
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestMutualTLS checks that with --client-ca only clients with a
// certificate from that CA get through.
func TestMutualTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ca := newTestCA(t)
	certFile, keyFile := ca.issue(t, "gxbitd", true)
	clientCert, clientKey := ca.issue(t, "alice", false)
	cfg := testConfig(t.TempDir())
	cfg.TLS.Cert, cfg.TLS.Key, cfg.TLS.ClientCA = certFile, keyFile, ca.file
	td := startDaemon(t, cfg, &fakeExecutor{})

	rc, _, errOut := runCLI(ctx, client.Jobs, false, "", "--server", td.addr, "--ca", ca.file)
	if rc != client.ExitError || !strings.Contains(errOut, "Unavailable") {
		t.Errorf("without a client certificate: rc %d, %q", rc, errOut)
	}
	other := newTestCA(t)
	otherCert, otherKey := other.issue(t, "mallory", false)
	rc, _, errOut = runCLI(ctx, client.Jobs, false, "", "--server", td.addr, "--ca", ca.file, "--cert", otherCert, "--key", otherKey)
	if rc != client.ExitError || !strings.Contains(errOut, "Unavailable") {
		t.Errorf("with a certificate of another CA: rc %d, %q", rc, errOut)
	}
	rc, out, errOut := runCLI(ctx, client.Jobs, false, "", "--server", td.addr, "--ca", ca.file, "--cert", clientCert, "--key", clientKey)
	if rc != 0 {
		t.Errorf("with a client certificate: rc %d, %q %q", rc, out, errOut)
	}
}

// TestListenNeedsTLS checks that without TLS gxbitd listens on loopback
// only, unless told --insecure-plaintext.
func TestListenNeedsTLS(t *testing.T) {
	env := func(string) string { return "" }
	for _, tt := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--listen", "localhost:7070"}, true},
		{[]string{"--listen", "127.0.0.1:0"}, true},
		{[]string{"--listen", "[::1]:7070"}, true},
		{[]string{"--listen", ":7070"}, false},
		{[]string{"--listen", "0.0.0.0:7070"}, false},
		{[]string{"--listen", "10.1.2.3:7070"}, false},
		{[]string{"--listen", ":7070", "--insecure-plaintext"}, true},
		{[]string{"--listen", ":7070", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, true},
		{[]string{"--tls-cert", "c.pem"}, false},
		{[]string{"--client-ca", "ca.pem"}, false},
	} {
		_, err := ParseFlags(append(tt.args, "--data", t.TempDir()), env, io.Discard)
		if (err == nil) != tt.ok {
			t.Errorf("ParseFlags(%q) = %v, want ok %v", tt.args, err, tt.ok)
		}
		if err != nil && strings.Contains(strings.Join(tt.args, " "), "7070") && !tt.ok && strings.HasPrefix(tt.args[1], ":") && !strings.Contains(err.Error(), "--insecure-plaintext") {
			t.Errorf("the error does not name the way out: %v", err)
		}
	}
}
