/* ref.h: what the CUDA C reference programs of testdata/device/nests share.
 *
 * Each NAME.cu is the hot loop nest of testdata/nests/NAME.c written by hand
 * in CUDA C, one thread per output element, with the program's
 * initialisation on the host and its checksum line on stdout: run with the
 * same arguments, it must print what the native program prints (nvcc -O3
 * -fmad=false keeps every multiply and add rounded as the C code does). On
 * stderr it prints "NAME kernel_ms=T": the wall time of every kernel of the
 * computation after initialisation, copies excluded.
 *
 * The same file builds without a GPU: compiled as C with REF_CPU defined
 * (gcc -x c -DREF_CPU), LAUNCH runs every thread of a kernel one after the
 * other on the CPU, so the references can be checked where there is no nvcc.
 * The code of the .cu files is therefore in the common subset of C and C++:
 * malloc results cast, arrays indexed flat, no variable-length arrays. */
#ifndef NESTS_REF_H
#define NESTS_REF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef REF_CPU

#include <cuda_runtime.h>

#define CHECK(call)                                                                           \
	do {                                                                                  \
		cudaError_t e_ = (call);                                                      \
		if (e_ != cudaSuccess) {                                                      \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,         \
				cudaGetErrorString(e_));                                      \
			exit(1);                                                              \
		}                                                                             \
	} while (0)

/* LAUNCH runs kernel over grid x block threads. */
#define LAUNCH(kernel, grid, block, ...)                     \
	do {                                                 \
		kernel<<<(grid), (block)>>>(__VA_ARGS__);    \
		CHECK(cudaGetLastError());                   \
	} while (0)

#define DIM3(x, y, z) dim3((x), (y), (z))

/* dev_alloc returns bytes of device memory. */
static inline void *dev_alloc(size_t bytes) {
	void *p;
	CHECK(cudaMalloc(&p, bytes));
	return p;
}

static inline void to_dev(void *dst, const void *src, size_t bytes) { CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice)); }
static inline void to_host(void *dst, const void *src, size_t bytes) { CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost)); }
static inline void dev_free(void *p) { CHECK(cudaFree(p)); }

static cudaEvent_t ev_start, ev_stop;

/* timer_start starts timing kernels, after a first launch-free call that
 * creates the context (not timed). */
static inline void timer_start(void) {
	CHECK(cudaFree(0));
	CHECK(cudaEventCreate(&ev_start));
	CHECK(cudaEventCreate(&ev_stop));
	CHECK(cudaEventRecord(ev_start, 0));
}

/* timer_stop waits for the kernels and returns the milliseconds since
 * timer_start. */
static inline double timer_stop(void) {
	float ms;
	CHECK(cudaEventRecord(ev_stop, 0));
	CHECK(cudaEventSynchronize(ev_stop));
	CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
	return ms;
}

#else /* REF_CPU: every thread in turn, on the CPU */

#include <time.h>

#define __global__ static
#define __device__ static

typedef struct {
	unsigned x, y, z;
} dim3;

static dim3 gridDim, blockDim, blockIdx, threadIdx;

#define DIM3(x, y, z) ((dim3){(x), (y), (z)})

#define LAUNCH(kernel, grid, block, ...)                                                              \
	do {                                                                                          \
		gridDim = (grid);                                                                     \
		blockDim = (block);                                                                   \
		for (blockIdx.z = 0; blockIdx.z < gridDim.z; blockIdx.z++)                            \
			for (blockIdx.y = 0; blockIdx.y < gridDim.y; blockIdx.y++)                    \
				for (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++)            \
					for (threadIdx.z = 0; threadIdx.z < blockDim.z; threadIdx.z++) \
						for (threadIdx.y = 0; threadIdx.y < blockDim.y; threadIdx.y++) \
							for (threadIdx.x = 0; threadIdx.x < blockDim.x; threadIdx.x++) \
								kernel(__VA_ARGS__);                    \
	} while (0)

static inline void *dev_alloc(size_t bytes) {
	void *p = malloc(bytes);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

static inline void to_dev(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }
static inline void to_host(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }
static inline void dev_free(void *p) { free(p); }

static struct timespec ts_start;

static inline void timer_start(void) { clock_gettime(CLOCK_MONOTONIC, &ts_start); }

static inline double timer_stop(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - ts_start.tv_sec) * 1e3 + (t.tv_nsec - ts_start.tv_nsec) / 1e6;
}

#endif /* REF_CPU */

/* cdiv is a / b rounded up: the blocks that cover a threads. */
static inline unsigned cdiv(int a, int b) { return a <= 0 ? 1 : (unsigned)((a + b - 1) / b); }

/* host_alloc returns bytes of host memory or ends the program. */
static inline void *host_alloc(size_t bytes) {
	void *p = malloc(bytes);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

/* The checksum, exactly as the nests programs compute it. */
static double sum_all;
static unsigned long long hash_all = 1469598103934665603ULL;

static inline void fold(const double *a, long n) {
	for (long i = 0; i < n; i++) {
		unsigned long long u;
		memcpy(&u, &a[i], sizeof u);
		sum_all += a[i];
		hash_all = (hash_all ^ u) * 1099511628211ULL;
	}
}

static inline void fold_f(const float *a, long n) {
	for (long i = 0; i < n; i++) {
		unsigned int u;
		memcpy(&u, &a[i], sizeof u);
		sum_all += a[i];
		hash_all = (hash_all ^ u) * 1099511628211ULL;
	}
}

/* size returns argv[k] as an integer in [1, max], def when absent; a bad
 * one ends the program with status 2. */
static inline int size(const char *name, int argc, char **argv, int k, int def, int max) {
	if (argc <= k)
		return def;
	char *end;
	long v = strtol(argv[k], &end, 10);
	if (*end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "%s: bad size %s (want 1..%d)\n", name, argv[k], max);
		exit(2);
	}
	return (int)v;
}

/* report prints the kernel time on stderr. */
static inline void report(const char *name, double ms) { fprintf(stderr, "%s kernel_ms=%.3f\n", name, ms); }

#endif /* NESTS_REF_H */
