// Synth throughput: how many MB/s `lane-tune synth` writes for q8_0 and q4_k checkpoints on this machine.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "compiler/synth.hpp"

int main(int argc, char** argv) {
  const std::string preset = argc > 1 ? argv[1] : "qwen3-0.6b";
  const std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
  std::printf("preset %s, %u hardware threads, files under %s\n", preset.c_str(), std::thread::hardware_concurrency(),
              dir.c_str());
  for (auto type : {lt::ggml::Type::Q8_0, lt::ggml::Type::Q4_K}) {
    lt::synth::Options o;
    o.preset = preset;
    o.type = type;
    const auto path = dir / ("synth_bench_" + std::to_string(static_cast<int>(type)) + ".gguf");
    const auto start = std::chrono::steady_clock::now();
    const uint64_t size = lt::synth::write(o, path);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::filesystem::remove(path);
    std::printf("SYNTH_MB_PER_S %s %s: %.1f MB in %.2f s = %.0f MB/s\n", preset.c_str(),
                std::string(lt::ggml::traits_of(type).name).c_str(), size / 1e6, s, size / 1e6 / s);
  }
  return 0;
}
