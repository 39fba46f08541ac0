// A lane on disk: its files written, and its program built with nvcc, linked with its host runtime's cached object.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "compiler/digest.hpp"
#include "compiler/error.hpp"
#include "compiler/lane.hpp"
#include "compiler/lane_image.hpp"
#include "compiler/version.hpp"

namespace lt::lane {

namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void write_file(const std::filesystem::path& p, const void* data, size_t n) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  if (!f) throw Error("cannot write " + p.string());
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw Error("cannot read " + p.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// `nvcc` and the flags every program lane-tune builds shares: C++17, line info, sm_`arch`, and the host code's
// optimization level `host_opt` (nvcc's -O is the host compiler's alone: the device code is the same under any).
// sm_90 builds as sm_90a, Hopper's own target (wgmma: gemm_wgmma.cuh), which runs on compute capability 9.0 alone.
std::vector<std::string> nvcc_flags(const std::string& nvcc, int arch, const char* host_opt = "-O3") {
  const std::string a = std::to_string(arch) + (arch == 90 ? "a" : "");
  return {nvcc, host_opt, "-std=c++17", "-lineinfo", "-gencode", "arch=compute_" + a + ",code=sm_" + a};
}

// The nvcc lanes are built with; throws when there is none.
std::string nvcc_or_throw() {
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) throw Error("no nvcc: install the CUDA toolkit or point $LT_NVCC at nvcc to build lanes");
  return nvcc;
}

// The runtime's and the program's commands as `nvcc_runtime_command` and `nvcc_command` make them, run by `nvcc`.
// The runtime at -O3: its loops are the lane's hot host work (the block repacking and the q8 split at load, the drive
// loop around the steps).
std::vector<std::string> runtime_command_of(const std::string& nvcc, const std::string& source,
                                            const std::string& object, int arch) {
  std::vector<std::string> c = nvcc_flags(nvcc, arch);
  c.insert(c.end(), {"-Werror", "all-warnings", "-c", "-o", object, source});
  return c;
}
// The program's host code at -O1: it is the steps' launch statements and main's calls into the runtime, every hot host
// loop (the repacking, the q8 split, the drive loop) being the runtime's, at -O3. gcc's -O3 on the launch statements
// was most of a lane's build (qwen3-0.6b: 11.1 of 16.0 s; at -O1 8.7 s), for calls that cost nanoseconds beside
// the microseconds of the launches they make.
std::vector<std::string> program_command_of(const std::string& nvcc, const std::filesystem::path& dir, int arch,
                                            const std::string& object) {
  std::vector<std::string> c = nvcc_flags(nvcc, arch, "-O1");
  c.insert(c.end(), {"-Werror", "all-warnings", "-o", (dir / kBinary).string(), (dir / kSource).string(), object});
  return c;
}

// Runs `cmd` through the shell, appending its output (stdout and stderr) to `out`; returns whether it exited 0.
bool run_command(const std::vector<std::string>& cmd, std::string& out) {
  std::string line;
  for (const std::string& part : cmd) line += quote(part) + " ";
  line += "2>&1";
  FILE* pipe = popen(line.c_str(), "r");
  if (!pipe) throw Error("cannot run " + cmd.front());
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// nvcc itself as the runtime cache's key sees it: its resolved path, size and modification time (another toolkit
// installed at the same path is another compiler, whose objects another nvcc's runtime library may not link).
std::string nvcc_identity(const std::string& nvcc) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(nvcc, ec);
  struct stat st {};
  if (ec || stat(real.c_str(), &st) != 0) return nvcc;
  return real.string() + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

void write(const Program& p, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  write_file(dir / kSource, p.cu.data(), p.cu.size());
  write_file(dir / kRuntimeSource, p.runtime.data(), p.runtime.size());
  write_file(dir / kSidecar, p.sidecar.data(), p.sidecar.size());
  const std::string desc = p.description.dump(2) + "\n";
  write_file(dir / kDescription, desc.data(), desc.size());
}

std::vector<std::string> nvcc_runtime_command(const std::string& source, const std::string& object, int arch) {
  return runtime_command_of(nvcc_or_throw(), source, object, arch);
}

std::vector<std::string> nvcc_command(const std::filesystem::path& dir, int arch, const std::string& object) {
  return program_command_of(nvcc_or_throw(), dir, arch, object);
}

std::vector<std::string> nvcc_module_command(const std::string& source, const std::string& cubin, int arch) {
  std::vector<std::string> c = nvcc_flags(nvcc_or_throw(), arch);
  c.insert(c.begin() + 1, "-cubin");
  c.insert(c.end(), {"-o", cubin, source});
  return c;
}

std::vector<std::string> nvcc_resident_command(const std::string& source, const std::string& binary, int arch) {
  std::vector<std::string> c = nvcc_flags(nvcc_or_throw(), arch);
  c.insert(c.end(), {"-o", binary, source});
  return c;
}

std::string build_commands(int arch) {
  std::string s;
  for (const auto& cmd : {runtime_command_of("nvcc", kRuntimeSource, "lane_host.o", arch),
                          program_command_of("nvcc", "", arch, "lane_host.o")}) {
    for (size_t i = 0; i < cmd.size(); ++i) s += (i ? " " : "") + cmd[i];
    s += "\n";
  }
  return s;
}

std::filesystem::path default_runtime_cache() {
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "lane-tune" / "lanes" / "runtime";
}

std::filesystem::path runtime_object(const std::filesystem::path& source, int arch, const std::filesystem::path& cache,
                                     std::string* log) {
  const std::string text = read_file(source);
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  XXH3_128bits_update(st, text.data(), text.size());
  for (const std::string& part : nvcc_runtime_command(kRuntimeSource, "lane_host.o", arch))
    XXH3_128bits_update(st, part.data(), part.size() + 1);
  const std::string nvcc = nvcc_identity(nvcc_path());
  XXH3_128bits_update(st, nvcc.data(), nvcc.size() + 1);
  const XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  const std::filesystem::path object = cache / (hex128(h.high64, h.low64) + ".o");
  if (std::filesystem::exists(object)) return object;

  std::error_code ec;
  std::filesystem::create_directories(cache, ec);
  if (ec) throw Error("cannot create the lane runtime cache " + cache.string() + ": " + ec.message());
  // One build of a runtime at a time: lanes built side by side wait for the first one's object rather than each
  // compiling their own (the lock is released when its file is closed, also when this process dies).
  const std::filesystem::path lock_path = cache / (object.stem().string() + ".lock");
  const int lock = open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock < 0) throw Error("cannot open " + lock_path.string() + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{lock};
  while (flock(lock, LOCK_EX) != 0 && errno == EINTR) {
  }
  if (std::filesystem::exists(object)) return object;
  // Compiled under a name of this build's own, then renamed into place: a reader never sees a partial object.
  static std::atomic<unsigned> builds{0};
  const std::filesystem::path tmp = cache / (object.stem().string() + "." + std::to_string(getpid()) + "-" +
                                             std::to_string(builds++) + ".building.o");
  std::string out;
  const bool ok = run_command(nvcc_runtime_command(source.string(), tmp.string(), arch), out);
  if (log) *log += out;
  if (!ok) {
    std::filesystem::remove(tmp, ec);
    throw Error("nvcc failed on " + source.string() + ":\n" + out);
  }
  std::filesystem::rename(tmp, object);
  return object;
}

std::filesystem::path build(const std::filesystem::path& dir, int arch, std::string* log,
                            const std::filesystem::path& cache) {
  if (arch < 50 || arch > 120) throw Error("sm_" + std::to_string(arch) + " is not a GPU architecture nvcc builds for");
  for (const char* f : {kSource, kRuntimeSource})
    if (!std::filesystem::exists(dir / f)) throw Error((dir / f).string() + " does not exist");
  std::string out;
  const std::filesystem::path object = runtime_object(dir / kRuntimeSource, arch, cache, &out);
  const bool ok = run_command(nvcc_command(dir, arch, object.string()), out);
  if (log) *log = out;
  if (!ok) throw Error("nvcc failed on " + (dir / kSource).string() + ":\n" + out);
  return dir / kBinary;
}

}  // namespace lt::lane
