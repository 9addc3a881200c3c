/* Small loop kernels for the static analyzer's golden tests. Built with
 * -nostdlib so that the binaries are tiny: see build.sh. */
#define N 16
static double A[N][N], B[N][N], C[N][N];
static long v[64], idx[64], hist[64];

__attribute__((noinline)) static void matmul(int n) {
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < n; k++)
				s += A[i][k] * B[k][j];
			C[i][j] = s;
		}
}

__attribute__((noinline)) static void tri(int n) {
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++)
			A[i][j] = B[j][i] + 1.0;
}

__attribute__((noinline)) static long search(long key, int n) {
	for (int i = 0; i < n; i++)
		if (v[i] == key)
			return i;
	return -1;
}

__attribute__((noinline)) static long f(long x) { return x * 3 + 1; }

__attribute__((noinline)) static void callloop(int n) {
	for (int i = 0; i < n; i++)
		v[i] = f(v[i]);
}

__attribute__((noinline)) static void histo(int n) {
	for (int i = 0; i < n; i++)
		hist[idx[i]] += 1;
}

__attribute__((noinline)) static long prefix(int n) {
	for (int i = 1; i < n; i++)
		v[i] += v[i - 1];
	return v[n - 1];
}

__attribute__((noinline)) static void stencil(int steps, int n) {
	for (int t = 0; t < steps; t++)
		for (int i = 1; i < n - 1; i++)
			B[0][i] = (A[0][i - 1] + A[0][i] + A[0][i + 1]) / 3;
}

static void sys_exit(long code) {
	__asm__ volatile("syscall" : : "a"(60), "D"(code) : "rcx", "r11", "memory");
	__builtin_unreachable();
}

void _start(void) {
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			A[i][j] = i + j;
			B[i][j] = i - j;
		}
	for (int i = 0; i < 64; i++) {
		v[i] = i * 7 % 13;
		idx[i] = (i * 5) % 64;
	}
	matmul(N);
	tri(N);
	long r = search(5, 64);
	callloop(64);
	histo(64);
	r += prefix(64);
	stencil(4, N);
	sys_exit((long)C[3][4] + r + hist[5] > 0 ? 0 : 1);
}
