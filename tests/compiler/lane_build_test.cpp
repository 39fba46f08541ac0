// A lane's build (compiler/src/lane/build.cpp): every lane carries the same host runtime, whose object is compiled once
// into the runtime cache and linked into each lane's program; compiled again for another runtime, architecture or
// nvcc. nvcc here is a stand-in script that records its calls, so these run where CUDA is not.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane.hpp"
#include "compiler/model.hpp"
#include "compiler/synth.hpp"
#include "support/test_support.hpp"

namespace lt::test {
namespace {

using nlohmann::json;

// A lane of tiny `preset` under knobs `k`, written into `dir`.
void write_lane(const std::string& preset, const json& k, const TempDir& tmp, const std::filesystem::path& dir) {
  synth::Options o;
  o.preset = preset;
  o.seed = 3;
  const auto path = tmp / (preset + ".gguf");
  if (!std::filesystem::exists(path)) synth::write(o, path);
  gguf::File f = gguf::File::open(path);
  const model::Model m = model::recognize(f);
  lane::write(lane::compile(f, m, knobs::Knobs::from_json(k), {132, 90}), dir);
}

// An nvcc stand-in: appends its arguments as a line to `calls`, writes "object" to its -o file, and sleeps a little
// (so that builds side by side overlap). Set as $LT_NVCC while the object lives.
class FakeNvcc {
 public:
  explicit FakeNvcc(const TempDir& dir) : script_(dir / "nvcc"), calls_(dir / "nvcc.calls") {
    std::ofstream(script_) << "#!/bin/sh\necho \"$*\" >> '" << calls_.string()
                           << "'\nout=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                              "sleep 0.2\necho object > \"$out\"\n";
    std::filesystem::permissions(script_, std::filesystem::perms::owner_all);
    if (const char* v = std::getenv("LT_NVCC")) saved_ = v;
    setenv("LT_NVCC", script_.c_str(), 1);
  }
  ~FakeNvcc() {
    if (saved_.empty())
      unsetenv("LT_NVCC");
    else
      setenv("LT_NVCC", saved_.c_str(), 1);
  }
  // Each call's arguments, in order.
  std::vector<std::string> calls() const {
    std::ifstream in(calls_);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  // How many of the calls compiled a runtime (`-c ... lane_host.cu`).
  size_t runtime_compiles() const {
    size_t n = 0;
    for (const std::string& c : calls()) n += c.find(" -c ") != std::string::npos;
    return n;
  }

 private:
  std::filesystem::path script_, calls_;
  std::string saved_;
};

TEST(LaneRuntime, EveryLaneCarriesTheSameRuntime) {
  TempDir tmp;
  for (const auto& [preset, k] : {std::pair<const char*, json>{"tiny-llama", json::object()},
                                  {"tiny-qwen2", {{"numerics", "precise"}, {"pdl", true}}},
                                  {"tiny-qwen3", {{"numerics", "int8"}, {"side_streams", true}}}}) {
    write_lane(preset, k, tmp, tmp / preset);
    std::ifstream in(tmp / preset / lane::kRuntimeSource);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), lane::runtime_source()) << preset << " " << k.dump();
  }
}

TEST(LaneRuntime, ObjectIsCompiledOnceAndReusedByEveryLane) {
  TempDir tmp;
  FakeNvcc nvcc(tmp);
  const auto cache = tmp / "cache";
  write_lane("tiny-qwen3", json::object(), tmp, tmp / "a");
  write_lane("tiny-llama", {{"numerics", "int8"}, {"pdl", true}}, tmp, tmp / "b");

  const auto object = lane::runtime_object(tmp / "a" / lane::kRuntimeSource, 90, cache);
  EXPECT_TRUE(std::filesystem::exists(object));
  EXPECT_EQ(object.parent_path(), cache);
  EXPECT_EQ(nvcc.runtime_compiles(), 1u);
  EXPECT_EQ(lane::runtime_object(tmp / "a" / lane::kRuntimeSource, 90, cache), object);
  EXPECT_EQ(nvcc.runtime_compiles(), 1u);

  // Each lane's build is then its program alone, linked with the cached object.
  for (const char* l : {"a", "b"}) {
    EXPECT_EQ(lane::build(tmp / l, 90, nullptr, cache), tmp / l / lane::kBinary);
    const std::string last = nvcc.calls().back();
    EXPECT_NE(last.find((tmp / l / lane::kSource).string() + " " + object.string()), std::string::npos) << last;
  }
  EXPECT_EQ(nvcc.runtime_compiles(), 1u);
  EXPECT_EQ(nvcc.calls().size(), 3u);
}

TEST(LaneRuntime, ObjectIsCompiledAgainForAnotherRuntimeArchitectureOrNvcc) {
  TempDir tmp;
  const auto cache = tmp / "cache";
  write_lane("tiny-qwen3", json::object(), tmp, tmp / "a");
  const auto source = tmp / "a" / lane::kRuntimeSource;
  std::filesystem::path first, changed;
  {
    FakeNvcc nvcc(tmp);
    first = lane::runtime_object(source, 90, cache);
    const auto sm80 = lane::runtime_object(source, 80, cache);
    EXPECT_NE(sm80, first);
    std::ofstream(source, std::ios::app) << "// a changed runtime\n";
    changed = lane::runtime_object(source, 90, cache);
    EXPECT_NE(changed, first);
    EXPECT_NE(changed, sm80);
    EXPECT_EQ(nvcc.runtime_compiles(), 3u);
  }
  // Another nvcc installed at the same path (another toolkit) is another compiler.
  FakeNvcc nvcc(tmp);
  std::ofstream(tmp / "nvcc", std::ios::app) << "# another toolkit\n";
  EXPECT_NE(lane::runtime_object(source, 90, cache), changed);
  EXPECT_EQ(nvcc.runtime_compiles(), 4u);
}

TEST(LaneRuntime, LanesBuiltSideBySideCompileTheRuntimeOnce) {
  TempDir tmp;
  FakeNvcc nvcc(tmp);
  const auto cache = tmp / "cache";
  for (const char* l : {"a", "b", "c", "d"}) write_lane("tiny-qwen2", json::object(), tmp, tmp / l);
  std::vector<std::thread> builds;
  for (const char* l : {"a", "b", "c", "d"}) builds.emplace_back([&, l] { lane::build(tmp / l, 90, nullptr, cache); });
  for (auto& b : builds) b.join();
  EXPECT_EQ(nvcc.runtime_compiles(), 1u);
  EXPECT_EQ(nvcc.calls().size(), 5u);
  for (const auto& e : std::filesystem::directory_iterator(cache))
    EXPECT_EQ(e.path().string().find(".building"), std::string::npos) << e.path();  // no partial object left
}

TEST(LaneRuntime, TheManualBuildCommandsCompileTheRuntimeThenLinkIt) {
  const std::string cmds = lane::build_commands(90);
  const size_t runtime = cmds.find("-c -o lane_host.o lane_host.cu"),
               program = cmds.find("-o lane lane.cu lane_host.o");
  ASSERT_NE(runtime, std::string::npos) << cmds;
  ASSERT_NE(program, std::string::npos) << cmds;
  EXPECT_LT(runtime, program);
  // (Hopper's own target, for wgmma; other GPUs their plain one)
  EXPECT_NE(cmds.find("arch=compute_90a,code=sm_90a"), std::string::npos) << cmds;
  const std::string a100 = lane::build_commands(80);
  EXPECT_NE(a100.find("arch=compute_80,code=sm_80"), std::string::npos) << a100;
  EXPECT_EQ(a100.find("sm_80a"), std::string::npos) << a100;
}

}  // namespace
}  // namespace lt::test
