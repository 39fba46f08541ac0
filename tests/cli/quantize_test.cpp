// `lane-tune quantize` end to end: a checkpoint requantized into a file inspect reads, refusals that name the problem
// and leave nothing behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "compiler/gguf.hpp"
#include "support/test_support.hpp"

namespace lt::test {
namespace {

TEST(Quantize, WritesTheTypeInspectReads) {
  TempDir dir;
  const std::string src = (dir / "f16.gguf").string(), out = (dir / "q4km.gguf").string();
  ASSERT_EQ(run(cli() + " synth --preset tiny-llama --type f16 --seed 3 -q -o " + src).status, 0);
  Output q = run(cli() + " quantize " + src + " --type Q4_K_M -o " + out);
  ASSERT_EQ(q.status, 0) << q.out;
  EXPECT_NE(q.out.find("as q4_k_m"), std::string::npos) << q.out;
  Output j = run(cli() + " inspect --json " + out);
  ASSERT_EQ(j.status, 0) << j.out;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["metadata"]["general.file_type"], 15);  // llama.cpp's MOSTLY_Q4_K_M
  bool q6 = false;
  for (const auto& t : doc["tensors"]) q6 |= t["type"] == "q6_k";
  EXPECT_TRUE(q6) << "the _M mix keeps the output in q6_k";
  EXPECT_EQ(gguf::File::open(out).tensor("blk.0.attn_q.weight")->type, ggml::Type::Q4_K);
}

// The type is laid out as llama.cpp's quantize tool writes its file type (q4_0: the output in q6_k), or with --pure in
// every matrix; --pure takes a type, not one of llama.cpp's mixes. synth lays types out alike.
TEST(Quantize, LaysTheTypeOutAsLlamaCppOrPure) {
  TempDir dir;
  const std::string src = (dir / "f16.gguf").string(), out = (dir / "q.gguf").string();
  ASSERT_EQ(run(cli() + " synth --preset tiny-llama --type f16 --seed 3 -q -o " + src).status, 0);
  ASSERT_EQ(run(cli() + " quantize " + src + " --type q4_0 -q -o " + out).status, 0);
  EXPECT_EQ(gguf::File::open(out).tensor("output.weight")->type, ggml::Type::Q6_K);
  EXPECT_EQ(gguf::File::open(out).tensor("blk.1.ffn_down.weight")->type, ggml::Type::Q4_0);
  ASSERT_EQ(run(cli() + " quantize " + src + " --type q4_0 --pure -q -o " + out).status, 0);
  EXPECT_EQ(gguf::File::open(out).tensor("output.weight")->type, ggml::Type::Q4_0);
  const std::string synth = (dir / "s.gguf").string();
  ASSERT_EQ(run(cli() + " synth --preset tiny-llama --type q4_0 -q -o " + synth).status, 0);
  EXPECT_EQ(gguf::File::open(synth).tensor("output.weight")->type, ggml::Type::Q6_K);
  ASSERT_EQ(run(cli() + " synth --preset tiny-llama --type q4_0 --pure -q -o " + synth).status, 0);
  EXPECT_EQ(gguf::File::open(synth).tensor("output.weight")->type, ggml::Type::Q4_0);
  Output mix = run(cli() + " quantize " + src + " --type q4_k_m --pure -o " + (dir / "m.gguf").string());
  EXPECT_NE(mix.status, 0);
  EXPECT_NE(mix.out.find("--pure: q4_k_m is llama.cpp's mix"), std::string::npos) << mix.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "m.gguf"));
}

TEST(Quantize, RefusalsNameTheProblemAndWriteNothing) {
  TempDir dir;
  const std::string src = (dir / "m.gguf").string(), out = (dir / "out.gguf").string();
  ASSERT_EQ(run(cli() + " synth --preset tiny-qwen3 -q -o " + src).status, 0);
  Output t = run(cli() + " quantize " + src + " --type q9_k -o " + out);
  EXPECT_NE(t.status, 0);
  EXPECT_NE(t.out.find("unknown type 'q9_k'"), std::string::npos) << t.out;
  Output mix = run(cli() + " quantize " + src + " --type q6_k_m -o " + out);
  EXPECT_NE(mix.status, 0);
  Output same = run(cli() + " quantize " + src + " --type q4_0 -o " + src);
  EXPECT_NE(same.status, 0);
  EXPECT_NE(same.out.find("must not be the checkpoint it reads"), std::string::npos) << same.out;
  Output missing = run(cli() + " quantize " + (dir / "none.gguf").string() + " --type q4_0 -o " + out);
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.out.find("cannot open"), std::string::npos) << missing.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(gguf::File::open(src).tensors().size() > 0) << "the source is untouched";
}

}  // namespace
}  // namespace lt::test
