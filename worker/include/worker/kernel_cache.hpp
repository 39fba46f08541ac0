// The worker's compiled kernels: each kernel instance a lane image calls is compiled once into a module (nvcc -cubin)
// and found again by the hash of its source and nvcc's command line, across configurations, jobs and restarts.
// Most configurations of a model share most of their kernels, so a configuration costs the few it adds.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/lane_image.hpp"

namespace lt::worker {

// A fixed set of threads that run tasks in the order given (the builds of every plan being prepared share it).
class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  // Runs `task` on a pool thread; the future holds its result or its exception.
  std::future<void> submit(std::function<void()> task);
  unsigned size() const { return unsigned(threads_.size()); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::thread> threads_;
};

// The kernel modules of one GPU architecture, cached on disk by content.
class KernelCache {
 public:
  // Modules live in `dir` (created); nvcc builds sm_`arch` code on `pool`'s threads; `nvcc` overrides the
  // compiler's nvcc (for tests: a stand-in that writes a cubin).
  KernelCache(std::filesystem::path dir, int arch, ThreadPool& pool, std::vector<std::string> nvcc = {});

  // The module of every kernel `img` calls, in the image's order, built where missing: the missing ones compile at
  // once on the pool (each once, however many plans ask for it). Throws lt::Error with nvcc's message when one does
  // not compile.
  std::vector<lane::Module> modules(const lane::Image& img);

  // What the cache did so far: modules found built, modules compiled, and the seconds nvcc took in all.
  struct Stats {
    uint64_t hits = 0, builds = 0;
    double build_s = 0;
  };
  Stats stats() const;

  // The cache key of an instance's module: the hash of its source and nvcc's command line (32 hex digits).
  std::string key(const std::string& source) const;

 private:
  lane::Module build(const std::string& key, const std::string& source, const std::string& instance);

  std::filesystem::path dir_;
  int arch_;
  ThreadPool& pool_;
  std::vector<std::string> nvcc_;
  mutable std::mutex m_;
  std::map<std::string, std::shared_future<lane::Module>> building_;
  Stats stats_;
};

// The symbol of kernel `instance` ("lk_gemv<lk_q8, 2, 1>" or "lk_swiglu") in the ELF symbol table of `cubin`: the
// one global function whose mangled name is the kernel's (its template arguments next, for a template). Throws
// lt::Error when the file is not an ELF object or holds no such function, or several.
std::string kernel_symbol(const std::filesystem::path& cubin, const std::string& instance);

}  // namespace lt::worker
