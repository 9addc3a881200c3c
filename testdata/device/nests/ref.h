/* ref.h: what the CUDA C reference programs of testdata/device/nests share.
 *
 * Each NAME.cu is the hot loop nest of testdata/nests/NAME.c written by hand
 * in CUDA C, one thread per output element, with the program's
 * initialisation on the host and its checksum line on stdout: run with the
 * same arguments, it must print what the native program prints (nvcc -O3
 * -fmad=false keeps every multiply and add rounded as the C code does). On
 * stderr it prints "NAME kernel_ms=T submit_ms=S": T is the device's time
 * from the first kernel of the computation after initialisation to the end
 * of the last (events on the stream; the kernels are queued back to back,
 * so the device runs them without waiting for the host: T is what it
 * spends running them, as gxbit's kernel time is), copies excluded; S is
 * the host's time in the kernel launch calls (their submission), which T
 * hides as long as the device is the slower of the two.
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

#include <time.h>

/* host_ms is the host's monotonic clock in milliseconds. */
static inline double host_ms(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* submit_ms sums the host's time in kernel launch calls. */
static double submit_ms;

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

/* LAUNCH runs kernel over grid x block threads, adding the host's time
 * submitting it to submit_ms. */
#define LAUNCH(kernel, grid, block, ...)                     \
	do {                                                 \
		double s_ = host_ms();                       \
		kernel<<<(grid), (block)>>>(__VA_ARGS__);    \
		CHECK(cudaGetLastError());                   \
		submit_ms += host_ms() - s_;                 \
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

/* report prints the kernel time and the launches' submission on stderr. */
static inline void report(const char *name, double ms) { fprintf(stderr, "%s kernel_ms=%.3f submit_ms=%.3f\n", name, ms, submit_ms); }

#endif /* NESTS_REF_H */
