// GPU detection through nvidia-smi, and the environment a result is measured under.
#include "worker/gpu.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "compiler/error.hpp"
#include "compiler/version.hpp"
#include "worker/process.hpp"

namespace lt::worker {
namespace {
std::string trim(std::string s) {
  auto sp = [](unsigned char c) { return std::isspace(c); };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), sp));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), sp).base(), s.end());
  return s;
}
std::string lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
// Multiprocessors per kind (nvidia-smi does not report them).
int sms_of(const std::string& kind) {
  static const std::pair<const char*, int> table[] = {{"a100", 108}, {"a10", 72},      {"a40", 84},   {"l4", 58},
                                                      {"l40s", 142}, {"h100", 132},    {"h200", 132}, {"gh200", 132},
                                                      {"b200", 148}, {"rtx4090", 128}, {"t4", 40},    {"v100", 80}};
  for (auto& [k, n] : table)
    if (kind == k) return n;
  return 0;
}
}  // namespace

std::string kind_of(const std::string& name) {
  std::string n = lower(name);
  // Longer names first, so that "gh200" is not read as "h200" nor "l40s" as "l4".
  for (const char* k : {"gh200", "h200", "h100", "b200", "a100", "a40", "a10", "l40s", "l4", "t4", "v100"})
    if (n.find(k) != std::string::npos) return k;
  if (n.find("4090") != std::string::npos) return "rtx4090";
  std::string k;
  for (char c : n)
    if (std::isalnum(static_cast<unsigned char>(c))) k += c;
  return k.empty() ? "unknown" : k;
}

Gpu parse_nvidia_smi_line(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream in(line);
  for (std::string x; std::getline(in, x, ',');) f.push_back(trim(x));
  if (f.size() != 6) throw lt::Error("nvidia-smi printed an unexpected line: " + line);
  Gpu g;
  g.name = f[0];
  g.kind = kind_of(g.name);
  g.driver = f[1];
  // Memory and clocks may read "[N/A]" (MIG, some boards): recorded as 0; the compute capability is required.
  auto number = [](const std::string& s) {
    try {
      return std::stod(s);
    } catch (const std::exception&) {
      return 0.0;
    }
  };
  g.memory_mib = number(f[2]);
  g.sm_clock_mhz = int(number(f[3]));
  g.mem_clock_mhz = int(number(f[4]));
  g.arch = int(number(f[5]) * 10 + 0.5);
  if (g.arch == 0) throw lt::Error("nvidia-smi printed an unexpected line: " + line);
  g.sms = sms_of(g.kind);
  return g;
}

Gpu detect_gpu(int index) {
  ProcessResult r;
  try {
    r = run_process({"nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,compute_cap",
                     "--format=csv,noheader", "-i", std::to_string(index)},
                    30);
  } catch (const std::exception&) {
  }
  if (r.exit_code != 0 || trim(r.out).empty())
    throw lt::Error("no NVIDIA GPU " + std::to_string(index) +
                    " here (nvidia-smi failed); a worker needs a GPU, or --replay FILE to answer from a recording");
  Gpu g = parse_nvidia_smi_line(trim(r.out.substr(0, r.out.find('\n'))));
  g.index = index;
  auto uuid = run_process({"nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader", "-i", std::to_string(index)}, 30);
  if (uuid.exit_code == 0) g.uuid = trim(uuid.out);
  auto smi = run_process({"nvidia-smi"}, 30);
  auto at = smi.out.find("CUDA Version:");
  if (at != std::string::npos) g.cuda = trim(smi.out.substr(at + 13, smi.out.find_first_of("|\n", at) - at - 13));
  std::string nvcc = lt::nvcc_path();
  if (!nvcc.empty()) {
    auto v = run_process({nvcc, "--version"}, 30);
    auto rel = v.out.find("release");
    if (rel != std::string::npos) g.nvcc = trim(v.out.substr(rel, v.out.find('\n', rel) - rel));
  }
  return g;
}

nlohmann::json read_clocks(int index) {
  try {
    auto r = run_process({"nvidia-smi", "--query-gpu=clocks.sm,clocks.mem", "--format=csv,noheader,nounits", "-i",
                          std::to_string(index)},
                         10);
    auto comma = r.out.find(',');
    if (r.exit_code == 0 && comma != std::string::npos)
      return {{"sm_clock_mhz", std::stoi(r.out.substr(0, comma))},
              {"mem_clock_mhz", std::stoi(r.out.substr(comma + 1))}};
  } catch (const std::exception&) {
  }
  return nlohmann::json::object();
}

nlohmann::json Gpu::properties() const {
  return {{"name", name}, {"memory_mib", memory_mib}, {"compute_capability", arch}, {"sms", sms}, {"index", index}};
}

nlohmann::json Gpu::environment() const {
  nlohmann::json e = {{"gpu", name},
                      {"driver", driver},
                      {"cuda", cuda},
                      {"nvcc", nvcc},
                      {"lane_tune", lt::version()},
                      {"sm_clock_mhz", sm_clock_mhz},
                      {"mem_clock_mhz", mem_clock_mhz}};
  if (replay) e["replay"] = true;
  return e;
}

std::string Gpu::environment_key() const {
  return std::string(replay ? "replay|" : "") + name + "|" + driver + "|" + cuda + "|" + nvcc + "|" + lt::version();
}

}  // namespace lt::worker
