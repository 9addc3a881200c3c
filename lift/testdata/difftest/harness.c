/*
 * The native half of decode's differential single-instruction test
 * (difftest_test.go). Built at test time with gcc, together with harness.S
 * and the cases.S the test generates:
 *
 *   harness IN OUT
 *
 * IN (little-endian): magic "GXDIFFIN", case count, mapping address,
 * scratch size, mapping size, scratch offset in the mapping; then per case
 * the input state (400 bytes, see harness.S) and the scratch bytes. The
 * mapping is made at the fixed address and the scratch bytes refilled
 * before every case.
 *
 * OUT: magic "GXDIFOUT", case count, scratch address; then per case the
 * signal the instruction raised (0 for none), its address, its length, its
 * code bytes (CODE_MAX, zero-padded), the state it left and the scratch bytes after it.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { STATE_SIZE = 400, CODE_MAX = 48 };

extern void ds_run(const void *in, void *code, void *out);
extern const uint64_t ds_table[]; /* start, end per case */
extern const uint64_t ds_ncases;

static sigjmp_buf ds_jump;
static volatile sig_atomic_t ds_signal;

static void on_signal(int sig) {
	ds_signal = sig;
	siglongjmp(ds_jump, 1);
}

static void die(const char *what) {
	perror(what);
	exit(2);
}

static void read_full(FILE *f, void *p, size_t n) {
	if (fread(p, 1, n, f) != n)
		die("read input");
}

static void write_full(FILE *f, const void *p, size_t n) {
	if (fwrite(p, 1, n, f) != n)
		die("write output");
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: harness IN OUT\n");
		return 2;
	}
	FILE *in = fopen(argv[1], "rb");
	if (!in)
		die(argv[1]);
	uint64_t hdr[6];
	read_full(in, hdr, sizeof hdr);
	if (memcmp(&hdr[0], "GXDIFFIN", 8) != 0) {
		fprintf(stderr, "bad input magic\n");
		return 2;
	}
	uint64_t n = hdr[1], scratch = hdr[2], ssize = hdr[3], msize = hdr[4], soff = hdr[5];
	if (n != ds_ncases) {
		fprintf(stderr, "input has %llu cases, the code %llu\n",
			(unsigned long long)n, (unsigned long long)ds_ncases);
		return 2;
	}
	void *area = mmap((void *)scratch, msize, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (area == MAP_FAILED || area != (void *)scratch) {
		/* Name what holds the address: the test's choice of it must change. */
		perror("mmap scratch");
		FILE *maps = fopen("/proc/self/maps", "r");
		if (maps) {
			char line[512];
			fprintf(stderr, "the harness's mappings:\n");
			while (fgets(line, sizeof line, maps))
				fputs(line, stderr);
			fclose(maps);
		}
		exit(2);
	}
	if (soff + ssize > msize) {
		fprintf(stderr, "scratch outside the mapping\n");
		return 2;
	}
	unsigned char *data = (unsigned char *)area + soff;

	stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16};
	if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
		die("sigaltstack");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	int sigs[] = {SIGFPE, SIGSEGV, SIGILL, SIGBUS, SIGTRAP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (sigaction(sigs[i], &sa, NULL) != 0)
			die("sigaction");

	FILE *out = fopen(argv[2], "wb");
	if (!out)
		die(argv[2]);
	uint64_t ohdr[3] = {0, n, scratch};
	memcpy(&ohdr[0], "GXDIFOUT", 8);
	write_full(out, ohdr, sizeof ohdr);

	unsigned char st[STATE_SIZE], res[STATE_SIZE];
	unsigned char *mem = malloc(ssize);
	if (!mem)
		die("malloc");
	for (uint64_t i = 0; i < n; i++) {
		read_full(in, st, STATE_SIZE);
		read_full(in, mem, ssize);
		memcpy(data, mem, ssize);
		memset(res, 0, sizeof res);
		ds_signal = 0;
		if (sigsetjmp(ds_jump, 1) == 0)
			ds_run(st, (void *)ds_table[2 * i], res);
		uint64_t start = ds_table[2 * i], len = ds_table[2 * i + 1] - start;
		unsigned char code[CODE_MAX] = {0};
		memcpy(code, (void *)start, len < CODE_MAX ? len : CODE_MAX);
		uint64_t meta[3] = {(uint64_t)ds_signal, start, len};
		write_full(out, meta, sizeof meta);
		write_full(out, code, sizeof code);
		write_full(out, res, STATE_SIZE);
		write_full(out, data, ssize);
	}
	if (fclose(out) != 0)
		die("close output");
	return 0;
}
