// The lane output contract's parser: a full run, profiles, forward compatibility, and lines that break the contract.
#include <gtest/gtest.h>

#include "compiler/error.hpp"
#include "compiler/lane_output.hpp"

namespace lt::lane {
namespace {

TEST(LaneOutput, ParsesARunWithTwoPrompts) {
  auto o = parse_output(
      "LANE_CONTRACT: 1\nDEVICE_BYTES: 123456\nHOST_BYTES: 0\nMOVED: 2\n"
      "TOKENS: 5 6 7\nPREFILL_MS: 1.5\nDECODE_MS_PER_TOKEN: 0.25\nDECODE_TOK_PER_S: 4000\n"
      "TOKENS: 9\nPREFILL_MS: 0.75\n");
  EXPECT_EQ(o.contract, 1);
  EXPECT_EQ(o.device_bytes, 123456u);
  EXPECT_EQ(o.moved, 2);
  ASSERT_EQ(o.prompts.size(), 2u);
  EXPECT_EQ(o.prompts[0].tokens, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_DOUBLE_EQ(o.prompts[0].decode_ms_per_token, 0.25);
  EXPECT_DOUBLE_EQ(o.prompts[0].decode_tok_per_s, 4000);
  EXPECT_DOUBLE_EQ(o.prompts[1].prefill_ms, 0.75);
  EXPECT_DOUBLE_EQ(o.prompts[1].decode_ms_per_token, 0);
}

TEST(LaneOutput, ParsesProfiles) {
  auto o = parse_output(
      "LANE_CONTRACT: 1\nPROFILE: gemv_q8 attn_q 12.5\nPROFILE: attention attn_out 3\nPROFILE_TOTAL_US: 15.5\n"
      "PROFILE_CHUNK: 8 gemm_q8 ffn_up 40\nPROFILE_CHUNK_TOTAL_US: 8 40\n");
  ASSERT_EQ(o.profile.size(), 3u);
  EXPECT_EQ(o.profile[0].rows, 1);
  EXPECT_EQ(o.profile[0].kind, "gemv_q8");
  EXPECT_EQ(o.profile[0].output, "attn_q");
  EXPECT_DOUBLE_EQ(o.profile[0].us, 12.5);
  EXPECT_EQ(o.profile[2].rows, 8);
  EXPECT_DOUBLE_EQ(o.profile_total_us, 15.5);
}

TEST(LaneOutput, IgnoresLinesItDoesNotKnow) {
  auto o = parse_output("warming up\nLANE_CONTRACT: 1\nNEW_FIGURE: 1 2 3\nnote: lower case\n\nTOKENS: 1\r\n");
  ASSERT_EQ(o.prompts.size(), 1u);
  EXPECT_EQ(o.prompts[0].tokens, (std::vector<int32_t>{1}));
}

TEST(LaneOutput, ReadsTheMeasurementOfOneProcess) {
  // What a lane run with --workload 512,128 --repeat 2 --profile --stagger-check 1,2 --logits prints (version 2).
  auto o = parse_output(
      "LANE_CONTRACT: 2\nDEVICE_BYTES: 9\nHOST_BYTES: 0\nMOVED: 0\nTOKENS: 5 6\nPREFILL_MS: 1.5\n"
      "DECODE_MS_PER_TOKEN: 0.5\nDECODE_TOK_PER_S: 2000\nWORKLOAD: 1 512 128 80.25 3.20000 486.65\n"
      "WORKLOAD: 2 512 128 79.75 3.10000 473.45\nPROFILE_TIMING: kernels-graph\nPROFILE: gemv l0_q 12.5\n"
      "PROFILE_TOTAL_US: 12.5\nPROFILE_CHUNK: 256 gemv l0_q 400\nPROFILE_CHUNK_TOTAL_US: 256 400\n"
      "PROFILE_RUNS: 1 127\nPROFILE_RUNS: 256 2\nLOGITS_HASH: 0123456789abcdef\nSTAGGER_CHECK: 1 same\n"
      "STAGGER_CHECK: 2 differs\n");
  EXPECT_EQ(o.contract, 2);
  ASSERT_EQ(o.workload.size(), 2u);
  EXPECT_EQ(o.workload[0].prompt, 512);
  EXPECT_EQ(o.workload[0].gen, 128);
  EXPECT_DOUBLE_EQ(o.workload[1].prefill_ms, 79.75);
  EXPECT_DOUBLE_EQ(o.workload[1].decode_ms_per_token, 3.1);
  EXPECT_DOUBLE_EQ(o.workload[1].total_ms, 473.45);
  ASSERT_EQ(o.profile_runs.size(), 2u);
  EXPECT_EQ(o.profile_runs[1].rows, 256);
  EXPECT_EQ(o.profile_runs[1].runs, 2);
  ASSERT_EQ(o.profile.size(), 2u);
  EXPECT_EQ(o.profile[1].rows, 256);
  EXPECT_EQ(o.logits_hash, "0123456789abcdef");
  ASSERT_EQ(o.stagger_checks.size(), 2u);
  EXPECT_TRUE(o.stagger_checks[0].same);
  EXPECT_EQ(o.stagger_checks[1].seed, 2u);
  EXPECT_FALSE(o.stagger_checks[1].same);
}

TEST(LaneOutput, ReadsAWorkloadStoppedByItsCutoff) {
  // --workload 512,128 --warmup 1 --repeat 2 --cutoff workload=900: the warm-up's estimate passed the limit, so no
  // WORKLOAD line and no profile follow (version 3).
  auto o = parse_output(
      "LANE_CONTRACT: 3\nDEVICE_BYTES: 9\nHOST_BYTES: 0\nMOVED: 0\nTOKENS: 5 6\nPREFILL_MS: 1.5\n"
      "CUTOFF: 512 128 300.5 6.25000 1094.25 900\nPHASE_MS: workload 310.2\n");
  EXPECT_EQ(o.contract, 3);
  EXPECT_TRUE(o.workload.empty());
  ASSERT_TRUE(o.cutoff.has_value());
  EXPECT_EQ(o.cutoff->run.prompt, 512);
  EXPECT_EQ(o.cutoff->run.gen, 128);
  EXPECT_DOUBLE_EQ(o.cutoff->run.prefill_ms, 300.5);
  EXPECT_DOUBLE_EQ(o.cutoff->run.decode_ms_per_token, 6.25);
  EXPECT_DOUBLE_EQ(o.cutoff->run.total_ms, 1094.25);
  EXPECT_DOUBLE_EQ(o.cutoff->limit_ms, 900);
  // Version 2's output has no cutoff.
  EXPECT_FALSE(parse_output("LANE_CONTRACT: 2\nWORKLOAD: 1 512 128 80.25 3.2 486.65\n").cutoff.has_value());
}

TEST(LaneOutput, RefusesKnownLinesThatDoNotParse) {
  for (const char* bad : {"DEVICE_BYTES: x",
                          "DEVICE_BYTES: -1",
                          "DEVICE_BYTES: 1 2",
                          "PREFILL_MS: 1",
                          "TOKENS: 1\nPREFILL_MS: nan",
                          "TOKENS: 1 a",
                          "TOKENS: -3",
                          "PROFILE: gemv 1",
                          "PROFILE_CHUNK: 0 k o 1",
                          "LANE_CONTRACT: 4",
                          "LANE_CONTRACT: 0",
                          "TOKENS: 1\nDECODE_TOK_PER_S: 1e999",
                          "WORKLOAD: 1 512 128 80.1 3.2",
                          "WORKLOAD: 2 512 128 80.1 3.2 500",
                          "WORKLOAD: 1 0 128 80.1 3.2 500",
                          "PROFILE_RUNS: 0 3",
                          "PROFILE_RUNS: 1 -2",
                          "LOGITS_HASH: 12ab",
                          "LOGITS_HASH: 0123456789abcdeg",
                          "STAGGER_CHECK: 1 maybe",
                          "STAGGER_CHECK: -1 same",
                          "CUTOFF: 512 128 80.1 3.2 500",
                          "CUTOFF: 0 128 80.1 3.2 500 400",
                          "CUTOFF: 512 128 80.1 3.2 500 inf",
                          "CUTOFF: 512 128 80 3 500 400\nCUTOFF: 512 128 80 3 500 400"}) {
    EXPECT_THROW(parse_output(bad), lt::Error) << bad;
  }
  try {
    parse_output("LANE_CONTRACT: 1\nMOVED: many\n");
    FAIL();
  } catch (const lt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lt::lane
