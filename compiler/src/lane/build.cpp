// A lane on disk: its files written, and its program built with nvcc.
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>

#include "compiler/error.hpp"
#include "compiler/lane.hpp"
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

}  // namespace

void write(const Program& p, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  write_file(dir / kSource, p.cu.data(), p.cu.size());
  write_file(dir / kSidecar, p.sidecar.data(), p.sidecar.size());
  const std::string desc = p.description.dump(2) + "\n";
  write_file(dir / kDescription, desc.data(), desc.size());
}

std::vector<std::string> nvcc_command(const std::filesystem::path& dir, int arch) {
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) throw Error("no nvcc: install the CUDA toolkit or point $LT_NVCC at nvcc to build lanes");
  const std::string a = std::to_string(arch);
  return {nvcc,
          "-O3",
          "-std=c++17",
          "-lineinfo",
          "-gencode",
          "arch=compute_" + a + ",code=sm_" + a,
          "-Werror",
          "all-warnings",
          "-o",
          (dir / kBinary).string(),
          (dir / kSource).string()};
}

std::vector<std::string> nvcc_module_command(const std::string& source, const std::string& cubin, int arch) {
  std::vector<std::string> c = nvcc_command("", arch);
  c.resize(c.size() - 3);  // the flags, without the lane's output and source
  c.insert(c.begin() + 1, "-cubin");
  c.erase(std::find(c.begin(), c.end(), "-Werror"), std::find(c.begin(), c.end(), "-Werror") + 2);
  c.insert(c.end(), {"-o", cubin, source});
  return c;
}

std::vector<std::string> nvcc_resident_command(const std::string& source, const std::string& binary, int arch) {
  std::vector<std::string> c = nvcc_command("", arch);
  c.resize(c.size() - 3);
  c.erase(std::find(c.begin(), c.end(), "-Werror"), std::find(c.begin(), c.end(), "-Werror") + 2);
  c.insert(c.end(), {"-o", binary, source});
  return c;
}

std::filesystem::path build(const std::filesystem::path& dir, int arch, std::string* log) {
  if (arch < 50 || arch > 120) throw Error("sm_" + std::to_string(arch) + " is not a GPU architecture nvcc builds for");
  if (!std::filesystem::exists(dir / kSource)) throw Error((dir / kSource).string() + " does not exist");
  std::string cmd;
  for (const std::string& part : nvcc_command(dir, arch)) cmd += quote(part) + " ";
  cmd += "2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw Error("cannot run nvcc");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  if (log) *log = out;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("nvcc failed on " + (dir / kSource).string() + ":\n" + out);
  return dir / kBinary;
}

}  // namespace lt::lane
