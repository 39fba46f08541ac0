// The worker's compiled kernels: each kernel instance a lane image calls is compiled once (nvcc -cubin) and found
// again by the hash of its own module's source and nvcc's command line, across configurations, jobs and restarts.
// Most configurations of a model share most of their kernels, so a configuration costs the few it adds; those it adds
// share modules (nvcc's fixed cost, reading the kernel library, is most of a one-kernel module's time).
//
// On disk (the cache's folder): <key>.symbol holds an instance's kernel symbol, and on a second line the cubin that
// holds it where that is a shared module's (b<hash>.cubin), else <key>.cubin. A symbol file is written only after its
// cubin is whole.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
  // once on the pool (each once, however many plans ask for it), up to kBatch instances that read the same parts of
  // the library in one module (one nvcc run; an instance whose kernel cannot be told apart in it, or a module that
  // does not compile, is built alone). `added`, when given, is set to how many of them this call sent to be built
  // (not those it found built or being built for another image). Throws lt::Error with nvcc's message when one does
  // not compile.
  std::vector<lane::Module> modules(const lane::Image& img, size_t* added = nullptr);

  static constexpr size_t kBatch = 8;

  // What the cache did so far: instances found built, instances compiled, and the seconds nvcc took in all.
  struct Stats {
    uint64_t hits = 0, builds = 0;
    double build_s = 0;
  };
  Stats stats() const;

  // The cache key of an instance's module: the hash of its source and nvcc's command line (32 hex digits).
  std::string key(const std::string& source) const;

 private:
  // An instance asked for and not built yet: its key and the promise its askers wait on.
  struct Pending {
    std::string instance, key;
    std::shared_ptr<std::promise<lane::Module>> done;
    bool settled = false;
  };
  // The module of `key` where a whole one is on disk: its symbol file, then the cubin it names.
  std::optional<lane::Module> built(const std::string& key) const;
  // The folder a module `name` is built in: the cache's, named for this process.
  std::filesystem::path building_dir(const std::string& name) const;
  // nvcc on `source` in a fresh building_dir(name) (returned, the cubin in it as module.cubin); throws lt::Error with
  // nvcc's message, naming `what` and the folder (left for a look).
  std::filesystem::path compile(const std::string& name, const std::string& source, const std::string& what);
  lane::Module build(const std::string& key, const std::string& source, const std::string& instance);
  // The instances of `batch` (one library's parts) in one module, each promise kept.
  void build_batch(const std::string& head, std::vector<Pending>& batch);

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
