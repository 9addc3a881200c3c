// fixture.h: the host side shared by gxbit's CUDA test kernels.
//
// Each <name>.cu holds one extern "C" kernel and a main() that fills its
// inputs from a seeded LCG, launches it once through the CUDA runtime, and
// writes, into the current directory:
//   <name>.<param>.in.bin   the bytes copied to each input buffer
//   <name>.<param>.out.bin  the bytes read back from each output buffer
//   <name>.json             the manifest: kernel, launch shape, parameters
// gputest (package github.com/gxbit/gxbit/gpu/gputest) replays the manifest
// on any gpu.Driver and compares the outputs with these recordings.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(call)                                                            \
  do {                                                                      \
    cudaError_t e_ = (call);                                                \
    if (e_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
                   cudaGetErrorString(e_));                                 \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

// Lcg is the deterministic generator of every input (Numerical Recipes
// constants, 32-bit state).
struct Lcg {
  uint32_t s;
  explicit Lcg(uint32_t seed) : s(seed) {}
  uint32_t next() {
    s = s * 1664525u + 1013904223u;
    return s;
  }
  // unit returns a float in [0, 1) with 24 random bits.
  float unit() { return float(next() >> 8) * (1.0f / 16777216.0f); }
  float range(float lo, float hi) { return lo + (hi - lo) * unit(); }
  double drange(double lo, double hi) {
    double u = double(next() >> 5) * (1.0 / 134217728.0);
    return lo + (hi - lo) * u;
  }
  int32_t irange(int32_t lo, int32_t hi) {
    return int32_t(int64_t(lo) + int64_t(next() % uint32_t(int64_t(hi) - lo + 1)));
  }
  uint64_t next64() { return (uint64_t(next()) << 32) | next(); }
};

template <class T>
static uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

class Fixture {
 public:
  Fixture(const char* name, const char* kernel) : name_(name), kernel_(kernel) {}

  // in adds a buffer parameter that the kernel only reads.
  template <class T>
  void in(const char* pname, const std::vector<T>& host) {
    buffer(pname, host.data(), host.size() * sizeof(T), true, false);
  }
  // inout adds a buffer parameter with initial contents that the kernel
  // updates; its contents after the launch are recorded.
  template <class T>
  void inout(const char* pname, const std::vector<T>& host) {
    buffer(pname, host.data(), host.size() * sizeof(T), true, true);
  }
  // out adds a zero-filled buffer parameter of n bytes whose contents after
  // the launch are recorded.
  void out(const char* pname, size_t n) { buffer(pname, nullptr, n, false, true); }

  void s32(const char* pname, int32_t v) { scalar(pname, "s32", 4, bits_of(v), std::to_string(v)); }
  void u32(const char* pname, uint32_t v) { scalar(pname, "u32", 4, bits_of(v), std::to_string(v)); }
  void s64(const char* pname, int64_t v) { scalar(pname, "s64", 8, bits_of(v), std::to_string(v)); }
  void f32(const char* pname, float v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", double(v));
    scalar(pname, "f32", 4, bits_of(v), b);
  }
  void f64(const char* pname, double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", v);
    scalar(pname, "f64", 8, bits_of(v), b);
  }

  // tolerance marks the most recent output buffer as produced by .approx
  // instructions: an element of type elem ("f32") matches when
  // |got-want| <= abs + rel*|want|. why names the ISA bound it comes from.
  void tolerance(const char* elem, double abs, double rel, const char* why) {
    char b[512];
    std::snprintf(b, sizeof b,
                  ", \"tolerance\": {\"elem\": \"%s\", \"abs\": %.17g, \"rel\": %.17g, \"why\": \"%s\"}",
                  elem, abs, rel, why);
    params_.back().extra += b;
    approx_ = true;
  }

  // launch runs the kernel once, then writes the data files and manifest.
  void launch(const void* func, dim3 grid, dim3 block, unsigned shared) {
    std::vector<void*> args;
    for (auto& p : params_) args.push_back(&p.slot);
    CK(cudaLaunchKernel(func, grid, block, args.data(), shared, 0));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::string js = "{\n";
    js += "  \"name\": \"" + name_ + "\",\n";
    js += "  \"ptx\": \"" + name_ + ".ptx\",\n";
    js += "  \"kernel\": \"" + kernel_ + "\",\n";
    js += "  \"grid\": [" + dims(grid) + "],\n";
    js += "  \"block\": [" + dims(block) + "],\n";
    js += "  \"shared_bytes\": " + std::to_string(shared) + ",\n";
    js += std::string("  \"approx\": ") + (approx_ ? "true" : "false") + ",\n";
    js += "  \"params\": [\n";
    for (size_t i = 0; i < params_.size(); ++i) {
      Param& p = params_[i];
      js += "    {\"name\": \"" + p.name + "\", \"type\": \"" + p.type + "\"";
      if (p.type == "buffer") {
        js += ", \"size\": " + std::to_string(p.size);
        if (p.has_in) js += ", \"input\": \"" + file(p, "in") + "\"";
        if (p.has_out) {
          std::vector<unsigned char> got(p.size);
          CK(cudaMemcpy(got.data(), p.dev, p.size, cudaMemcpyDeviceToHost));
          write(file(p, "out"), got.data(), got.size());
          js += ", \"expected\": \"" + file(p, "out") + "\"";
        }
        js += p.extra;
      } else {
        char b[32];
        std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)p.slot);
        js += std::string(", \"bits\": \"") + b + "\", \"value\": \"" + p.value + "\"";
      }
      js += i + 1 < params_.size() ? "},\n" : "}\n";
    }
    js += "  ]\n}\n";
    write(name_ + ".json", js.data(), js.size());
    for (auto& p : params_)
      if (p.dev) CK(cudaFree(p.dev));
    std::printf("%s: ok\n", name_.c_str());
  }

 private:
  struct Param {
    std::string name, type, value, extra;
    uint64_t slot = 0;  // the kernel argument: scalar bits or device pointer
    void* dev = nullptr;
    size_t size = 0;
    bool has_in = false, has_out = false;
  };

  void buffer(const char* pname, const void* host, size_t n, bool has_in, bool has_out) {
    Param p;
    p.name = pname;
    p.type = "buffer";
    p.size = n;
    p.has_in = has_in;
    p.has_out = has_out;
    CK(cudaMalloc(&p.dev, n));
    if (host) {
      CK(cudaMemcpy(p.dev, host, n, cudaMemcpyHostToDevice));
      write(file(p, "in"), host, n);
    } else {
      CK(cudaMemset(p.dev, 0, n));
    }
    p.slot = uint64_t(uintptr_t(p.dev));
    params_.push_back(p);
  }

  void scalar(const char* pname, const char* type, int, uint64_t bits, const std::string& value) {
    Param p;
    p.name = pname;
    p.type = type;
    p.slot = bits;
    p.value = value;
    params_.push_back(p);
  }

  std::string file(const Param& p, const char* kind) const { return name_ + "." + p.name + "." + kind + ".bin"; }

  static std::string dims(dim3 d) {
    return std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z);
  }

  static void write(const std::string& path, const void* data, size_t n) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(data, 1, n, f) != n || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      std::exit(1);
    }
  }

  std::string name_, kernel_;
  std::vector<Param> params_;
  bool approx_ = false;
};
