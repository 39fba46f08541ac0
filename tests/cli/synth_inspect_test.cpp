// `lane-tune synth` and `lane-tune inspect` end to end: files written, tables and JSON printed, errors explained.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/digest.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/model.hpp"
#include "support/test_support.hpp"

namespace lt::test {
namespace {

TEST(SynthInspect, SynthWritesWhatInspectDescribes) {
  TempDir dir;
  const std::string file = (dir / "q.gguf").string();
  Output s = run(cli() + " synth --preset tiny-qwen3 --type q4_k --seed 3 -o " + file);
  ASSERT_EQ(s.status, 0) << s.out;
  EXPECT_NE(s.out.find("tiny-qwen3"), std::string::npos) << s.out;

  Output t = run(cli() + " inspect " + file);
  ASSERT_EQ(t.status, 0) << t.out;
  for (const char* want : {"architecture: qwen3", "hyperparameters: layers=2", "qwen3.attention.key_length",
                           "blk.1.attn_q_norm.weight", "q4_k", "256 x 512", "totals:", "digest xxh64:"})
    EXPECT_NE(t.out.find(want), std::string::npos) << want << "\n" << t.out;

  Output j = run(cli() + " inspect --json " + file);
  ASSERT_EQ(j.status, 0) << j.out;
  auto doc = nlohmann::json::parse(j.out);
  auto f = gguf::File::open(file);
  EXPECT_EQ(doc["architecture"], "qwen3");
  EXPECT_EQ(doc["size"], f.size());
  char digest[32];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(f.digest()));
  EXPECT_EQ(doc["digest"], digest);
  EXPECT_EQ(doc["metadata"]["qwen3.block_count"], 2);
  EXPECT_EQ(doc["hyperparameters"]["layers"], 2);
  EXPECT_EQ(doc["hyperparameters"]["head_dim"], 128);
  EXPECT_EQ(doc["metadata"]["qwen3.attention.layer_norm_rms_epsilon"], 1e-6);
  EXPECT_EQ(doc["tensors"].size(), f.tensors().size());
  EXPECT_EQ(doc["tensors"][0]["name"], "token_embd.weight");
  EXPECT_EQ(doc["tensors"][0]["type"], "q4_k");
  EXPECT_EQ(doc["totals"]["tensors"], f.tensors().size());
}

TEST(SynthInspect, SynthIsDeterministicAndListsPresets) {
  TempDir dir;
  for (const char* name : {"a", "b"})
    ASSERT_EQ(run(cli() + " synth -q --preset tiny-moe --type q6_k -o " + (dir / name).string()).status, 0);
  std::ifstream a(dir / "a", std::ios::binary), b(dir / "b", std::ios::binary);
  std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(sa, sb);
  Output l = run(cli() + " synth --list");
  EXPECT_EQ(l.status, 0);
  for (const char* p : {"tiny-llama", "qwen3-0.6b", "llama-3.1-8b", "qwen3-30b-a3b", "gpt-oss-20b"})
    EXPECT_NE(l.out.find(p), std::string::npos) << p;
}

// `digest` prints the content digest jobs and the database name a checkpoint by: files of two seeds differ (their
// headers' xxh64 does not), the same file twice agrees, and the value is content_digest's.
TEST(SynthInspect, DigestIsTheCheckpointsIdentity) {
  TempDir dir;
  for (const char* seed : {"1", "2"})
    ASSERT_EQ(run(cli() + " synth -q --preset tiny-qwen3 --seed " + seed + " -o " + (dir / seed).string()).status, 0);
  Output d = run(cli() + " digest " + (dir / "1").string() + " " + (dir / "2").string() + " " + (dir / "1").string());
  ASSERT_EQ(d.status, 0) << d.out;
  std::istringstream lines(d.out);
  std::string header, a, fa, b, fb, c, fc;
  std::getline(lines, header);
  EXPECT_EQ(header.substr(0, 6), "digest") << d.out;
  lines >> a >> fa >> b >> fb >> c >> fc;
  EXPECT_TRUE(is_digest(a)) << d.out;
  EXPECT_EQ(a, content_digest(dir / "1"));
  EXPECT_EQ(b, content_digest(dir / "2"));
  EXPECT_NE(a, b);
  EXPECT_EQ(a, c);
  EXPECT_EQ(fa, (dir / "1").string());
  EXPECT_EQ(fb, (dir / "2").string());
  EXPECT_EQ(gguf::File::open(dir / "1").digest(), gguf::File::open(dir / "2").digest());

  Output j = run(cli() + " digest --json " + (dir / "1").string() + " " + (dir / "2").string());
  ASSERT_EQ(j.status, 0) << j.out;
  const auto rows = nlohmann::json::parse(j.out);
  ASSERT_EQ(rows.size(), 2u) << j.out;
  EXPECT_EQ(rows[0], (nlohmann::json{{"file", (dir / "1").string()}, {"digest", a}}));
  EXPECT_EQ(rows[1]["digest"], b);
  Output csv = run(cli() + " digest --format csv " + (dir / "1").string());
  EXPECT_EQ(csv.out, "digest,file\r\n" + a + "," + (dir / "1").string() + "\r\n");
}

// inspect names the checkpoint by the same digest, in text and in JSON, next to its header's xxh64.
TEST(SynthInspect, InspectPrintsTheDigest) {
  TempDir dir;
  const std::string file = (dir / "q.gguf").string();
  ASSERT_EQ(run(cli() + " synth -q --preset tiny-qwen3 --seed 5 -o " + file).status, 0);
  const std::string digest = content_digest(file);
  Output t = run(cli() + " inspect " + file);
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_NE(t.out.find("digest:       " + digest + " "), std::string::npos) << t.out;
  Output j = run(cli() + " inspect --json " + file);
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_EQ(nlohmann::json::parse(j.out)["content_digest"], digest);
  Output d = run(cli() + " digest " + file);
  EXPECT_EQ(d.out.substr(d.out.find('\n') + 1), digest + "  " + file + "\n");
}

// A file that is missing or cannot be read is named on stderr with a non-zero status; the others are still digested.
TEST(SynthInspect, DigestNamesFilesItCannotRead) {
  TempDir dir;
  const std::string file = (dir / "q.gguf").string();
  ASSERT_EQ(run(cli() + " synth -q --preset tiny-qwen3 -o " + file).status, 0);
  Output m = run(cli() + " digest " + (dir / "missing").string() + " " + file);
  EXPECT_EQ(m.status, 3);
  EXPECT_NE(m.out.find("cannot read " + (dir / "missing").string() + ": no such file"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find(content_digest(file) + "  " + file), std::string::npos) << m.out;
  Output folder = run(cli() + " digest " + dir.path().string());
  EXPECT_EQ(folder.status, 1);
  EXPECT_NE(folder.out.find("cannot read " + dir.path().string()), std::string::npos) << folder.out;
  EXPECT_THROW(content_digest(dir.path()), Error);
}

TEST(SynthInspect, ErrorsSayWhatIsWrong) {
  TempDir dir;
  Output bad_preset = run(cli() + " synth --preset nope -o " + (dir / "x").string());
  EXPECT_NE(bad_preset.status, 0);
  EXPECT_NE(bad_preset.out.find("unknown preset 'nope'"), std::string::npos) << bad_preset.out;
  Output bad_type = run(cli() + " synth --preset tiny-llama --type q9 -o " + (dir / "x").string());
  EXPECT_NE(bad_type.status, 0);
  EXPECT_NE(bad_type.out.find("unknown type 'q9'"), std::string::npos) << bad_type.out;

  const auto junk = dir / "junk.gguf";
  std::ofstream(junk.string()) << "GGUF\x03\x00\x00\x00 not much else";
  Output r = run(cli() + " inspect " + junk.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("truncated file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("byte offset"), std::string::npos) << r.out;
  Output m = run(cli() + " inspect " + (dir / "missing.gguf").string());
  EXPECT_EQ(m.status, 3);
  EXPECT_NE(m.out.find("cannot open"), std::string::npos) << m.out;
}

// A shape of the user's own (--shape, JSON text or a file, over --preset's where both are given): written as asked, a
// K-quant's rows that are not whole 256-blocks falling back as llama.cpp's quantizer does; bad shapes refused with why.
TEST(SynthInspect, ShapesOfYourOwn) {
  TempDir dir;
  const std::string file = (dir / "s.gguf").string();
  const std::string shape =
      R"({"architecture":"qwen2","layers":2,"d_model":896,"heads":14,"kv_heads":2,"head_dim":64,"ffn":4864,)"
      R"("vocab":1200,"context":32768,"qkv_bias":true,"tied_output":true})";
  Output s = run(cli() + " synth --shape '" + shape + "' --type q4_k_m -o " + file);
  ASSERT_EQ(s.status, 0) << s.out;
  Output i = run(cli() + " inspect " + file + " --format json");
  ASSERT_EQ(i.status, 0) << i.out;
  const nlohmann::json j = nlohmann::json::parse(i.out);
  EXPECT_EQ(j["metadata"]["qwen2.embedding_length"], 896) << i.out.substr(0, 600);
  EXPECT_EQ(j["metadata"]["qwen2.attention.head_count"], 14);
  EXPECT_EQ(j["metadata"]["qwen2.attention.head_count_kv"], 2);
  std::map<std::string, std::string> types;
  for (const auto& t : j["tensors"]) types[t["name"]] = t["type"];
  EXPECT_EQ(types["blk.0.attn_q.weight"], "q5_0");  // (896 is not whole 256-blocks: q4_k falls back)
  EXPECT_EQ(types["blk.0.attn_q.bias"], "f32");
  EXPECT_EQ(types.count("output.weight"), 0u);  // (tied)
  // A file, over a preset: the preset's fields but those the file names.
  const auto over = dir / "over.json";
  std::ofstream(over.string()) << R"({"heads": 8, "kv_heads": 4, "name": "wide"})";
  Output o = run(cli() + " synth --preset tiny-qwen3 --shape " + over.string() + " -o " + file);
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("wide"), std::string::npos) << o.out;
  const nlohmann::json k = nlohmann::json::parse(run(cli() + " inspect " + file + " --format json").out);
  EXPECT_EQ(k["metadata"]["qwen3.attention.head_count"], 8);
  EXPECT_EQ(k["metadata"]["qwen3.embedding_length"], 256);  // (tiny-qwen3's)
  for (
      const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
          {R"({"heads": 3})", "unsupported architecture ''"},
          {R"({"architecture": "qwen3", "layers": 1, "d_model": 100, "heads": 2, "kv_heads": 1, "head_dim": 64, "ffn": 256, "vocab": 300, "context": 64})",
           "multiples of 32"},
          {R"({"architecture": "llama", "layers": 5000, "d_model": 256, "heads": 4, "kv_heads": 1, "head_dim": 64, "ffn": 256, "vocab": 300, "context": 64})",
           "at most 4096 layers"},
          {R"({"bogus": 1})", "unknown shape field \"bogus\""},
          {R"({"layers": -1})", "shape field layers must be an integer"},
          {R"({"layers": {"x": 1}})", "layers must be an integer"},
          {R"({"layers": [[[[1]]]]})", "one flat JSON object"},
          {R"([1])", "a shape is a JSON object"},
          {R"({"architecture": "gpt-oss"})", "nonzero"}}) {
    Output r = run(cli() + " synth --shape '" + bad + "' -o " + file);
    EXPECT_EQ(r.status, 1) << bad;
    EXPECT_NE(r.out.find(why), std::string::npos) << bad << ": " << r.out;
  }
  Output missing = run(cli() + " synth --shape " + (dir / "none.json").string() + " -o " + file);
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.out.find("cannot read"), std::string::npos) << missing.out;
}

// `lane-tune knobs --sample N [--where JSON] [--seed S]`: valid configurations drawn uniformly, one JSON object a line,
// within the narrowed domains; the same seed the same draws; what cannot be drawn refused with why.
TEST(KnobsCommand, DrawsValidPointsWhereAsked) {
  TempDir dir;
  const std::string file = (dir / "m.gguf").string();
  ASSERT_EQ(run(cli() + " synth -q --preset tiny-qwen3 --type q4_k_m -o " + file).status, 0);
  const gguf::File f = gguf::File::open(file);
  const knobs::Space space = knobs::space(model::recognize(f), {132, 90});
  Output a = run(cli() + " knobs " + file + " --sample 6 --seed 3");
  ASSERT_EQ(a.status, 0) << a.out;
  std::istringstream lines(a.out);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    const knobs::Knobs k = knobs::Knobs::from_json(nlohmann::json::parse(line));
    EXPECT_EQ(space.why_invalid(k), "") << line;
  }
  EXPECT_EQ(n, 6);
  EXPECT_EQ(run(cli() + " knobs " + file + " --sample 6 --seed 3").out, a.out);
  EXPECT_NE(run(cli() + " knobs " + file + " --sample 6 --seed 4").out, a.out);
  Output w = run(cli() + " knobs " + file + R"( --sample 20 --where '{"numerics": "int8", "max_chunk": [64, 256]}')");
  ASSERT_EQ(w.status, 0) << w.out;
  std::istringstream narrowed(w.out);
  for (std::string line; std::getline(narrowed, line);) {
    const nlohmann::json k = nlohmann::json::parse(line);
    EXPECT_EQ(k["numerics"], "int8") << line;
    EXPECT_TRUE(k["max_chunk"] == 64 || k["max_chunk"] == 256) << line;
  }
  for (const auto& [where, why] : std::vector<std::pair<std::string, std::string>>{
           {R"({"nope": 1})", "unknown knob \"nope\""},
           {R"({"max_chunk": 3})", "max_chunk = 3 is outside its domain"},
           {R"({"numerics": "precise", "kv_cache": "f16"})", "no valid point"},
           {R"([1])", "must be a JSON object"}}) {
    Output r = run(cli() + " knobs " + file + " --sample 1 --where '" + where + "'");
    EXPECT_EQ(r.status, 1) << where;
    EXPECT_NE(r.out.find(why), std::string::npos) << where << ": " << r.out;
  }
}

}  // namespace
}  // namespace lt::test
