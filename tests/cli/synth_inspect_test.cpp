// `lane-tune synth` and `lane-tune inspect` end to end: files written, tables and JSON printed, errors explained.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/digest.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
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

}  // namespace
}  // namespace lt::test
