// The kernel cache: modules by the hash of their source and flags, built on a shared pool, their kernel's symbol read
// from the cubin's ELF symbol table.
#include "worker/kernel_cache.hpp"

#include <xxhash.h>

#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "compiler/digest.hpp"
#include "compiler/error.hpp"
#include "compiler/lane.hpp"
#include "worker/process.hpp"

namespace lt::worker {

// ---- the pool

struct ThreadPool::Impl {
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::packaged_task<void()>> tasks;
  bool stopping = false;
};

ThreadPool::ThreadPool(unsigned threads) : impl_(std::make_unique<Impl>()) {
  for (unsigned i = 0; i < std::max(1u, threads); ++i)
    threads_.emplace_back([this] {
      for (;;) {
        std::packaged_task<void()> task;
        {
          std::unique_lock lock(impl_->m);
          impl_->cv.wait(lock, [&] { return impl_->stopping || !impl_->tasks.empty(); });
          if (impl_->tasks.empty()) return;
          task = std::move(impl_->tasks.front());
          impl_->tasks.pop_front();
        }
        task();
      }
    });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(impl_->m);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  for (auto& t : threads_) t.join();
}

std::future<void> ThreadPool::submit(std::function<void()> task) {
  std::packaged_task<void()> t(std::move(task));
  auto f = t.get_future();
  {
    std::lock_guard lock(impl_->m);
    impl_->tasks.push_back(std::move(t));
  }
  impl_->cv.notify_one();
  return f;
}

// ---- ELF symbols

namespace {

template <class T>
T read_at(const std::string& b, size_t at) {
  if (at + sizeof(T) > b.size()) throw lt::Error("truncated ELF object");
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

// The global functions of an ELF64 little-endian object's symbol table.
std::vector<std::string> elf_functions(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string b = ss.str();
  if (b.size() < 64 ||
      b.compare(0, 4,
                "\x7f"
                "ELF") != 0 ||
      b[4] != 2 || b[5] != 1)
    throw lt::Error(path.string() + " is not an ELF64 little-endian object");
  const auto shoff = read_at<uint64_t>(b, 0x28);
  const auto shentsize = read_at<uint16_t>(b, 0x3A), shnum = read_at<uint16_t>(b, 0x3C);
  auto section = [&](size_t i, size_t field) { return shoff + i * shentsize + field; };
  std::vector<std::string> out;
  for (size_t i = 0; i < shnum; ++i) {
    if (read_at<uint32_t>(b, section(i, 4)) != 2) continue;  // SHT_SYMTAB
    const auto off = read_at<uint64_t>(b, section(i, 24)), size = read_at<uint64_t>(b, section(i, 32));
    const auto link = read_at<uint32_t>(b, section(i, 40));
    const auto entsize = read_at<uint64_t>(b, section(i, 56));
    const auto stroff = read_at<uint64_t>(b, section(link, 24)), strsize = read_at<uint64_t>(b, section(link, 32));
    if (entsize < 24) throw lt::Error(path.string() + ": a symbol table entry is too small");
    for (uint64_t at = off; at + entsize <= off + size; at += entsize) {
      const auto name = read_at<uint32_t>(b, at);
      const auto info = read_at<uint8_t>(b, at + 4);
      if ((info & 0xf) != 2 || (info >> 4) != 1 || name >= strsize) continue;  // STT_FUNC, STB_GLOBAL
      const char* s = b.data() + stroff + name;
      out.emplace_back(s, strnlen(s, size_t(strsize - name)));
    }
  }
  return out;
}

// The demangled name of a symbol (the symbol itself where it does not demangle).
std::string demangled(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : symbol;
}

// 32 hex digits of the 128-bit hash of `text`.
std::string hash_hex(const std::string& text) {
  const XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  return hex128(h.high64, h.low64);
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw lt::Error("cannot write " + p.string());
}

}  // namespace

std::string kernel_symbol(const std::filesystem::path& cubin, const std::string& instance) {
  const std::string name = instance.substr(0, instance.find('<'));
  const bool templated = name.size() != instance.size();
  const std::string prefix = "_Z" + std::to_string(name.size()) + name;
  std::string found;
  for (const std::string& f : elf_functions(cubin)) {
    if (f.compare(0, prefix.size(), prefix) != 0 || f.size() == prefix.size()) continue;
    if ((f[prefix.size()] == 'I') != templated) continue;
    if (!found.empty()) throw lt::Error(cubin.string() + " holds more than one " + instance + ": " + found + ", " + f);
    found = f;
  }
  if (found.empty()) throw lt::Error(cubin.string() + " holds no kernel " + instance);
  return found;
}

// ---- the cache

KernelCache::KernelCache(std::filesystem::path dir, int arch, ThreadPool& pool, std::vector<std::string> nvcc)
    : dir_(std::move(dir)), arch_(arch), pool_(pool), nvcc_(std::move(nvcc)) {
  std::filesystem::create_directories(dir_);
}

std::string KernelCache::key(const std::string& source) const {
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  XXH3_128bits_update(st, source.data(), source.size());
  const std::vector<std::string> cmd = nvcc_.empty() ? lane::nvcc_module_command("m.cu", "m.cubin", arch_) : nvcc_;
  for (const std::string& part : cmd) XXH3_128bits_update(st, part.data(), part.size() + 1);
  const XXH128_hash_t h = XXH3_128bits_digest(st);
  const std::string k = hex128(h.high64, h.low64);
  XXH3_freeState(st);
  return k;
}

std::optional<lane::Module> KernelCache::built(const std::string& key) const {
  std::ifstream in(dir_ / (key + ".symbol"));
  std::string symbol, cubin;
  if (!(in >> symbol)) return std::nullopt;
  // A module of several instances: its cubin's name on the second line (a file of this folder).
  if (!(in >> cubin)) cubin = key + ".cubin";
  if (cubin.find('/') != std::string::npos || !std::filesystem::exists(dir_ / cubin)) return std::nullopt;
  return lane::Module{(dir_ / cubin).string(), symbol};
}

std::filesystem::path KernelCache::building_dir(const std::string& name) const {
  // (the process's own: workers sharing the folder may build the same module at once; either rename leaves it whole)
  return dir_ / (name + "." + std::to_string(getpid()) + ".building");
}

std::filesystem::path KernelCache::compile(const std::string& name, const std::string& source,
                                           const std::string& what) {
  const auto tmp = building_dir(name);
  std::filesystem::remove_all(tmp);
  std::filesystem::create_directories(tmp);
  write_text(tmp / "module.cu", source);
  std::vector<std::string> cmd =
      nvcc_.empty() ? lane::nvcc_module_command((tmp / "module.cu").string(), (tmp / "module.cubin").string(), arch_)
                    : nvcc_;
  if (!nvcc_.empty()) cmd.insert(cmd.end(), {"-o", (tmp / "module.cubin").string(), (tmp / "module.cu").string()});
  const ProcessResult r = run_process(cmd, 600);
  if (r.exit_code != 0)
    throw lt::Error("nvcc failed on the module of " + what + " (" + tmp.string() + "):\n" + r.err + r.out);
  return tmp;
}

lane::Module KernelCache::build(const std::string& key, const std::string& source, const std::string& instance) {
  if (auto m = built(key)) {
    std::lock_guard lock(m_);
    ++stats_.hits;
    return *m;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto tmp = compile(key, source, instance);
  const auto cubin = dir_ / (key + ".cubin"), symbol = dir_ / (key + ".symbol");
  const std::string sym = kernel_symbol(tmp / "module.cubin", instance);
  // The cubin first, then its symbol: a module whose symbol file exists is whole.
  std::filesystem::rename(tmp / "module.cubin", cubin);
  write_text(tmp / "symbol", sym + "\n");
  std::filesystem::rename(tmp / "symbol", symbol);
  std::filesystem::remove_all(tmp);
  std::lock_guard lock(m_);
  ++stats_.builds;
  stats_.build_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {cubin.string(), sym};
}

void KernelCache::build_batch(const std::string& head, std::vector<Pending>& batch) {
  auto settle = [](Pending& p, lane::Module m) {
    p.done->set_value(std::move(m));
    p.settled = true;
  };
  std::vector<Pending*> left;  // (those found built since they were asked for: another worker sharing the folder)
  for (Pending& p : batch) {
    if (auto m = built(p.key)) {
      {
        std::lock_guard lock(m_);
        ++stats_.hits;
      }
      settle(p, *m);
    } else {
      left.push_back(&p);
    }
  }
  std::vector<Pending*> alone;
  if (left.size() == 1) alone = left;
  if (left.size() > 1) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::string> instances;
    std::string keys;
    for (const Pending* p : left) instances.push_back(p->instance), keys += p->key;
    const std::string name = "b" + hash_hex(keys);
    std::vector<std::string> symbols(left.size());
    std::filesystem::path tmp;
    try {
      tmp = compile(name, lane::shared_module_source(head, instances), std::to_string(instances.size()) + " instances");
      std::vector<std::pair<std::string, std::string>> kernels;
      for (const std::string& f : elf_functions(tmp / "module.cubin")) kernels.emplace_back(f, demangled(f));
      symbols = lane::instance_symbols(head, instances, kernels);
    } catch (const lt::Error&) {
      // Each built alone then, with its own message where it does not compile.
      std::filesystem::remove_all(building_dir(name));
    }
    std::vector<std::pair<Pending*, std::string>> found;  // with its symbol
    for (size_t i = 0; i < left.size(); ++i) {
      if (symbols[i].empty()) {
        alone.push_back(left[i]);
        continue;
      }
      // The cubin first, then each symbol file naming it.
      if (found.empty()) std::filesystem::rename(tmp / "module.cubin", dir_ / (name + ".cubin"));
      write_text(tmp / "symbol", symbols[i] + "\n" + name + ".cubin\n");
      std::filesystem::rename(tmp / "symbol", dir_ / (left[i]->key + ".symbol"));
      found.emplace_back(left[i], symbols[i]);
    }
    if (!tmp.empty()) std::filesystem::remove_all(tmp);
    {
      std::lock_guard lock(m_);  // (counted before an asker hears: it reads the counts once it has its modules)
      stats_.builds += found.size();
      stats_.build_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    for (auto& [p, symbol] : found) settle(*p, lane::Module{(dir_ / (name + ".cubin")).string(), symbol});
  }
  for (Pending* p : alone) {
    try {
      settle(*p, build(p->key, lane::module_source(head, p->instance), p->instance));
    } catch (...) {
      p->done->set_exception(std::current_exception());
      p->settled = true;
    }
  }
}

std::vector<lane::Module> KernelCache::modules(const lane::Image& img, size_t* added) {
  std::vector<std::pair<std::string, std::shared_future<lane::Module>>> wait;
  std::map<std::string, std::vector<Pending>> missing;  // by the library parts their modules read
  for (const std::string& instance : img.kernels) {
    const std::string k = key(lane::module_source(img.head, instance));
    std::lock_guard lock(m_);
    auto it = building_.find(k);
    if (it != building_.end()) {
      ++stats_.hits;  // built, or being built for another image
    } else {
      auto done = std::make_shared<std::promise<lane::Module>>();
      it = building_.emplace(k, done->get_future().share()).first;
      if (auto m = built(k)) {  // built before (an earlier run of the worker)
        ++stats_.hits;
        done->set_value(*m);
      } else {
        missing[lane::module_library(instance)].push_back({instance, k, done, false});
      }
    }
    wait.emplace_back(k, it->second);
  }
  if (added) {
    *added = 0;
    for (const auto& [parts, pending] : missing) *added += pending.size();
  }
  // A module of up to kBatch instances a build: nvcc reads the head and the library once for them all.
  for (auto& [parts, pending] : missing) {
    const size_t n = (pending.size() + kBatch - 1) / kBatch;
    for (size_t b = 0; b < n; ++b) {
      std::vector<Pending> batch(std::make_move_iterator(pending.begin() + b * pending.size() / n),
                                 std::make_move_iterator(pending.begin() + (b + 1) * pending.size() / n));
      pool_.submit([this, head = img.head, batch = std::move(batch)]() mutable {
        try {
          build_batch(head, batch);
        } catch (...) {  // (the cache's folder failing under it: every asker hears)
          for (Pending& p : batch)
            if (!p.settled) p.done->set_exception(std::current_exception());
        }
      });
    }
  }
  std::vector<lane::Module> out;
  std::exception_ptr failed;
  for (auto& [k, f] : wait) {
    try {
      out.push_back(f.get());
    } catch (...) {
      // A failed build is not remembered: a later image asks nvcc again (and gets its message).
      std::lock_guard lock(m_);
      building_.erase(k);
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  return out;
}

KernelCache::Stats KernelCache::stats() const {
  std::lock_guard lock(m_);
  return stats_;
}

}  // namespace lt::worker
