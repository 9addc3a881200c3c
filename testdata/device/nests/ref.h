/* ref.h: what the CUDA C reference programs of testdata/device/nests share.
 *
 * Each NAME.cu is the hot loop nest of testdata/nests/NAME.c written by hand
 * in CUDA C, one thread per output element, with the program's
 * initialisation on the host and its checksum line on stdout: run with the
 * same arguments, it must print what the native program prints (nvcc -O3
 * -fmad=false keeps every multiply and add rounded as the C code does).
 *
 * Every launch names the nest of NAME.c it mirrors, by the NEST of its
 * "LOOP: NEST.ID" markers (LAUNCH's first argument; "mean+stddev" for a
 * kernel that does two nests' work), and is timed by itself: events on the
 * stream right around the kernel. On stderr the program prints, per kernel
 * (nest and function) in the order of their first launch,
 *
 *   NAME kernel NEST ms=T launches=N function=F
 *
 * and then the total line "NAME kernel_ms=T submit_ms=S": T sums every
 * launch's time, copies excluded; S is the host's time in the kernel
 * launch calls (their submission). Each kernel is queued behind a small
 * gate kernel that holds the stream until the kernel and its events are
 * queued (a word in host memory the device maps, released after the launch
 * call), so that a launch's time is the device's running the kernel, not
 * the host's submitting it, as gxbit's kernel_seconds are
 * (cuda/gate.go). REF_GATE=0 in the environment leaves the gate out; the
 * gate lets go by itself after a second.
 *
 * The same file builds without a GPU: compiled as C with REF_CPU defined
 * (gcc -x c -DREF_CPU), LAUNCH runs every thread of a kernel one after the
 * other on the CPU (and times it on the host's clock), so the references
 * can be checked where there is no nvcc. The code of the .cu files is
 * therefore in the common subset of C and C++: malloc results cast, arrays
 * indexed flat, no variable-length arrays. */
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

/* ref_kernel is one kernel the reference times: the nest it mirrors, its
 * function, its launches and the milliseconds they ran. */
struct ref_kernel {
	const char *nest, *function;
	long launches;
	double ms;
};

#define REF_MAX_KERNELS 16
static struct ref_kernel ref_kernels[REF_MAX_KERNELS];
static int ref_nkernels;

/* ref_kernel_index returns the index of the kernel (nest, function) in
 * ref_kernels, adding it at its first launch. */
static inline int ref_kernel_index(const char *nest, const char *function) {
	for (int i = 0; i < ref_nkernels; i++)
		if (strcmp(ref_kernels[i].nest, nest) == 0 && strcmp(ref_kernels[i].function, function) == 0)
			return i;
	if (ref_nkernels == REF_MAX_KERNELS) {
		fprintf(stderr, "ref.h: more than %d kernels\n", REF_MAX_KERNELS);
		exit(1);
	}
	ref_kernels[ref_nkernels].nest = nest;
	ref_kernels[ref_nkernels].function = function;
	return ref_nkernels++;
}

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

/* ref_timing is one launch's events and the kernel it ran. */
struct ref_timing {
	cudaEvent_t start, stop;
	int kernel;
};

static struct ref_timing *ref_timings;
static long ref_ntimings, ref_captimings;

/* The gate: gate_word is a word of host memory the device maps (gate_dev
 * on the device); the gate kernel of the n-th launch waits until it reads
 * n or more, and the host writes n once the launch is queued. */
static unsigned *gate_word, *gate_dev;
static unsigned gate_count;
static int gate_on;

/* ref_gate holds the stream until *word reaches n, or for a second at most
 * (so that a host that never writes cannot hang the device). */
__global__ void ref_gate(const volatile unsigned *word, unsigned n) {
	unsigned long long start, now;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	for (;;) {
		if (*word >= n)
			return;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
		if (now - start > 1000000000ULL)
			return;
	}
}

/* launch_begin queues the gate and the start event of a launch of the
 * kernel (nest, function) and returns the launch's index. */
static inline long launch_begin(const char *nest, const char *function) {
	if (ref_ntimings == ref_captimings) {
		ref_captimings = ref_captimings ? 2 * ref_captimings : 256;
		ref_timings = (struct ref_timing *)realloc(ref_timings, ref_captimings * sizeof *ref_timings);
		if (!ref_timings) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
	}
	long t = ref_ntimings++;
	ref_timings[t].kernel = ref_kernel_index(nest, function);
	CHECK(cudaEventCreate(&ref_timings[t].start));
	CHECK(cudaEventCreate(&ref_timings[t].stop));
	if (gate_on) {
		gate_count++;
		ref_gate<<<1, 1>>>(gate_dev, gate_count);
		CHECK(cudaGetLastError());
	}
	CHECK(cudaEventRecord(ref_timings[t].start, 0));
	return t;
}

/* launch_end queues the stop event of launch t and opens its gate. */
static inline void launch_end(long t) {
	CHECK(cudaEventRecord(ref_timings[t].stop, 0));
	if (gate_on)
		__atomic_store_n(gate_word, gate_count, __ATOMIC_RELEASE);
}

/* LAUNCH runs kernel over grid x block threads as a kernel of nest,
 * timing it by itself and adding the host's time submitting it to
 * submit_ms. */
#define LAUNCH(nest, kernel, grid, block, ...)                 \
	do {                                                   \
		long t_ = launch_begin((nest), #kernel);       \
		double s_ = host_ms();                         \
		kernel<<<(grid), (block)>>>(__VA_ARGS__);      \
		CHECK(cudaGetLastError());                     \
		submit_ms += host_ms() - s_;                   \
		launch_end(t_);                                \
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

/* timer_start starts timing kernels, after a first launch-free call that
 * creates the context (not timed), and sets up the gate. */
static inline void timer_start(void) {
	CHECK(cudaFree(0));
	const char *g = getenv("REF_GATE");
	gate_on = !(g && strcmp(g, "0") == 0);
	if (gate_on) {
		CHECK(cudaHostAlloc((void **)&gate_word, sizeof *gate_word, cudaHostAllocMapped));
		*gate_word = 0;
		CHECK(cudaHostGetDevicePointer((void **)&gate_dev, gate_word, 0));
	}
}

/* timer_stop waits for the kernels, adds each launch's time to its
 * kernel's and returns the sum of all launches' milliseconds. */
static inline double timer_stop(void) {
	double total = 0;
	CHECK(cudaDeviceSynchronize());
	for (long t = 0; t < ref_ntimings; t++) {
		float ms;
		CHECK(cudaEventElapsedTime(&ms, ref_timings[t].start, ref_timings[t].stop));
		ref_kernels[ref_timings[t].kernel].ms += ms;
		ref_kernels[ref_timings[t].kernel].launches++;
		total += ms;
		CHECK(cudaEventDestroy(ref_timings[t].start));
		CHECK(cudaEventDestroy(ref_timings[t].stop));
	}
	ref_ntimings = 0;
	return total;
}

#else /* REF_CPU: every thread in turn, on the CPU */

#define __global__ static
#define __device__ static

typedef struct {
	unsigned x, y, z;
} dim3;

static dim3 gridDim, blockDim, blockIdx, threadIdx;

#define DIM3(x, y, z) ((dim3){(x), (y), (z)})

/* LAUNCH runs kernel's threads one after the other as a kernel of nest,
 * timed on the host's clock. */
#define LAUNCH(nest, kernel, grid, block, ...)                                                        \
	do {                                                                                          \
		int k_ = ref_kernel_index((nest), #kernel);                                           \
		double s_ = host_ms();                                                                \
		gridDim = (grid);                                                                     \
		blockDim = (block);                                                                   \
		for (blockIdx.z = 0; blockIdx.z < gridDim.z; blockIdx.z++)                            \
			for (blockIdx.y = 0; blockIdx.y < gridDim.y; blockIdx.y++)                    \
				for (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++)            \
					for (threadIdx.z = 0; threadIdx.z < blockDim.z; threadIdx.z++) \
						for (threadIdx.y = 0; threadIdx.y < blockDim.y; threadIdx.y++) \
							for (threadIdx.x = 0; threadIdx.x < blockDim.x; threadIdx.x++) \
								kernel(__VA_ARGS__);                    \
		ref_kernels[k_].ms += host_ms() - s_;                                                 \
		ref_kernels[k_].launches++;                                                           \
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

static inline void timer_start(void) {}

/* timer_stop returns the sum of all launches' milliseconds. */
static inline double timer_stop(void) {
	double total = 0;
	for (int i = 0; i < ref_nkernels; i++)
		total += ref_kernels[i].ms;
	return total;
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

/* report prints each kernel's time, then the total and the launches'
 * submission, on stderr. */
static inline void report(const char *name, double ms) {
	for (int i = 0; i < ref_nkernels; i++)
		fprintf(stderr, "%s kernel %s ms=%.3f launches=%ld function=%s\n", name, ref_kernels[i].nest, ref_kernels[i].ms,
			ref_kernels[i].launches, ref_kernels[i].function);
	fprintf(stderr, "%s kernel_ms=%.3f submit_ms=%.3f\n", name, ms, submit_ms);
}

#endif /* NESTS_REF_H */
