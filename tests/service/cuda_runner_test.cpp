// The CUDA runner without a GPU: a stand-in nvcc builds each lane as a shell script that follows the lane's output
// contract, so emitting, the compile cache, the reference, timing, profiling, staggering, the checks and the
// failure classes all run for real.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "compiler/gguf.hpp"
#include "compiler/model.hpp"
#include "support/test_support.hpp"
#include "worker/runner.hpp"

namespace lt::worker {
namespace {

// The stand-in nvcc: writes, at -o, a lane that prints the contract's lines with the CPU reference's tokens and
// logits (`lane-tune reference`, as a correct lane would), the precise lane always so unless $FAKE_PRECISE_OFF is
// set; other lanes misbehave as $FAKE_LANE_MODE says: race, wrong, fit, slow.
constexpr const char* kFakeNvcc = R"SH(#!/bin/sh
[ -n "$FAKE_NVCC_FAIL" ] && { echo "lane.cu(1): error: fake failure" >&2; exit 1; }
out=""; prev=""; for a in "$@"; do [ "$prev" = "-o" ] && out=$a; prev=$a; src=$a; done
ref=0; grep -q '"numerics": "precise"' "$(dirname "$src")/lane.json" && ref=1
cat > "$out" <<LANE
#!/bin/sh
mode=\${FAKE_LANE_MODE:-ok}; [ $ref = 1 ] && mode=ok
[ $ref = 1 ] && [ -n "\$FAKE_PRECISE_OFF" ] && mode=wrong
ckpt=\$1
shift 2; logits=""; profile=0; stagger=""; prompts=""
while [ \$# -gt 0 ]; do case "\$1" in
  --prompts) prompts=\$2; shift;; --logits) logits=\$2; shift;; --profile) profile=1;; --stagger) stagger=\$2; shift;;
esac; shift; done
[ \$mode = fit ] && { echo "lane: does not fit" >&2; exit 4; }
[ \$mode = slow ] && sleep 30
echo "LANE_CONTRACT: 1"; echo "DEVICE_BYTES: 1000"; echo "HOST_BYTES: 0"; echo "MOVED: 0"
out=\$(mktemp); ref=\$(mktemp)
"\$FAKE_LT" reference "\$ckpt" --prompts \$prompts --logits \$ref > \$out || exit 1
while read line; do
  echo "\$line"; echo "PREFILL_MS: 1.5"; echo "DECODE_MS_PER_TOKEN: 0.5"; echo "DECODE_TOK_PER_S: 2000"
done < \$out
[ \$profile = 1 ] && { echo "PROFILE: gemv_q8 attn_q 12.5"; echo "PROFILE_TOTAL_US: 12.5"; }
if [ -n "\$logits" ]; then
  if [ \$mode = wrong ] || { [ \$mode = race ] && [ -n "\$stagger" ]; }; then
    head -c \$(stat -c %s \$ref) /dev/zero | tr '\0' '\077' > \$logits
  else
    cp \$ref \$logits
  fi
fi
rm -f \$out \$ref
exit 0
LANE
chmod +x "$out"
)SH";

// A runner over a synthesized checkpoint with the stand-in nvcc.
struct Bench {
  test::TempDir dir;
  std::filesystem::path checkpoint = dir / "tiny.gguf";
  std::unique_ptr<Runner> runner;
  Plan plan;

  ~Bench() { unsetenv("LT_NVCC"); }  // the stand-in nvcc is this bench's alone

  Bench() {
    auto s = test::run(test::cli() + " synth --preset tiny-qwen3 -q -o " + checkpoint.string());
    EXPECT_EQ(s.status, 0) << s.out;
    auto nvcc = dir / "nvcc";
    std::ofstream(nvcc) << kFakeNvcc;
    std::filesystem::permissions(nvcc, std::filesystem::perms::owner_all);
    setenv("LT_NVCC", nvcc.c_str(), 1);
    setenv("FAKE_LT", test::cli().c_str(), 1);
    unsetenv("FAKE_NVCC_FAIL");
    CudaOptions o;
    o.gpu = parse_nvidia_smi_line("NVIDIA H200, 550.54.15, 143771 MiB, 1980 MHz, 2619 MHz, 9.0");
    o.cache_dir = dir / "lanes";
    runner = cuda_runner(o);
    plan.plan = 1;
    plan.checkpoint = "digest";
    plan.gpu = "h200";
    plan.knobs = {{"numerics", "dequant"}};
    plan.repetitions = 3;
    plan.warmup = 1;
    plan.prompts = {{3, {1, 2, 3}}, {2, {4}}};
    plan.stagger_seeds = {1, 2};
    plan.time_limit_s = 20;
  }
  Result measure(const char* mode) {
    setenv("FAKE_LANE_MODE", mode, 1);
    return runner->prepare(plan, checkpoint)();
  }
};

TEST(CudaRunner, MeasuresAndChecksAValidLane) {
  Bench b;
  auto r = b.measure("ok");
  EXPECT_TRUE(r.valid) << r.failure << ": " << r.reason << "\n" << r.error;
  EXPECT_DOUBLE_EQ(r.median_ms, 0.5);
  EXPECT_DOUBLE_EQ(r.spread_ms, 0);
  EXPECT_DOUBLE_EQ(r.prefill_ms, 3.0);
  EXPECT_DOUBLE_EQ(r.profile["total_us"].get<double>(), 12.5);
  EXPECT_TRUE(r.tokens_equal);
  EXPECT_TRUE(r.stagger_equal);
  EXPECT_DOUBLE_EQ(r.argmax_agree, 1);
  EXPECT_EQ(r.logits_hash.size(), 16u);
  EXPECT_EQ(r.environment["gpu"], "NVIDIA H200");
}

TEST(CudaRunner, ClassifiesFailures) {
  Bench b;
  auto race = b.measure("race");
  EXPECT_FALSE(race.valid);
  EXPECT_EQ(race.failure, failure::kRace) << race.reason;
  auto wrong = b.measure("wrong");
  EXPECT_EQ(wrong.failure, failure::kWrongResults) << wrong.reason;
  auto fit = b.measure("fit");
  EXPECT_EQ(fit.failure, failure::kDoesNotFit) << fit.reason;
  b.plan.time_limit_s = 1;
  auto slow = b.measure("slow");
  EXPECT_EQ(slow.failure, failure::kTimeout) << slow.reason;
}

TEST(CudaRunner, APreciseLaneThatDisagreesWithTheCpuReferenceFailsEveryPlan) {
  Bench b;
  setenv("FAKE_PRECISE_OFF", "1", 1);
  auto r = b.measure("ok");
  unsetenv("FAKE_PRECISE_OFF");
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.failure, failure::kWrongResults);
  EXPECT_NE(r.error.find("CPU reference"), std::string::npos) << r.reason << ": " << r.error;
}

TEST(CudaRunner, ReportsACompileError) {
  Bench b;
  setenv("FAKE_NVCC_FAIL", "1", 1);
  auto r = b.measure("ok");
  unsetenv("FAKE_NVCC_FAIL");
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.failure, failure::kCompileError);
  EXPECT_NE(r.error.find("fake failure"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace lt::worker
