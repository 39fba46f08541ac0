// The CUDA runner without a GPU: a stand-in nvcc builds each kernel module as a real ELF object (cc, with the
// kernel's mangled name) and the resident host as a shell script that follows the host's protocol and the lane's
// output contract, so images, the kernel cache, the resident host's life, the reference, the one-request measurement,
// the checks and the failure classes all run for real.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane_image.hpp"
#include "compiler/model.hpp"
#include "compiler/synth.hpp"
#include "compiler/version.hpp"
#include "support/test_support.hpp"
#include "worker/kernel_cache.hpp"
#include "worker/runner.hpp"

namespace lt::worker {
namespace {

// The stand-in nvcc. A module (-cubin): an object with a function for each instance the source takes by address, named
// as nvcc names it (a line a kernel logged). The resident host: a script that prints READY, then answers each RUN with
// the CPU reference's tokens and logits (`lane-tune reference`, as a correct lane would) for the precise image always
// (unless $FAKE_MODE_FILE.precise_off is not empty), and for other images as the file $FAKE_MODE_FILE says at each
// run: ok, race, wrong, fit, slow, die. Its workload's first run (a warm-up: prefill 8.0 ms, decode 0.2 ms a token)
// decides a --cutoff.
constexpr const char* kFakeNvcc = R"SH(#!/bin/sh
[ -n "$FAKE_NVCC_FAIL" ] && { echo "module.cu(1): error: fake failure" >&2; exit 1; }
out=""; prev=""; cubin=0; for a in "$@"; do [ "$prev" = "-o" ] && out=$a; [ "$a" = "-cubin" ] && cubin=1; prev=$a; src=$a; done
if [ $cubin = 1 ]; then
  [ -n "$FAKE_NVCC_FAIL_SHARED" ] && [ "$(grep -c '^void\* lk_instance' "$src")" -gt 1 ] &&
    { echo "module.cu(1): error: fake failure of a shared module" >&2; exit 1; }
  : > "$out.c"; : > "$out.log"; i=0
  grep '^void\* lk_instance[0-9]* = (void\*)&' "$src" | sed 's/.*&\(.*\);$/\1/' | while IFS= read -r inst; do
    name=${inst%%<*}; sym="_Z${#name}${name}v"
    if [ "$name" != "$inst" ]; then
      sym="_Z${#name}${name}I"
      for a in $(echo "$inst" | sed 's/^[^<]*<\(.*\)>$/\1/' | tr -d ' ' | tr ',' ' '); do
        case $a in
          true) sym="${sym}Lb1E" ;; false) sym="${sym}Lb0E" ;;
          *[!0-9]*) sym="${sym}${#a}${a}" ;; *) sym="${sym}Li${a}E" ;;
        esac
      done
      sym="${sym}Evv"
      # (an argument of other characters: a name the cache cannot tell apart from its kind's, so it builds it alone)
      echo "$inst" | sed 's/^[^<]*<\(.*\)>$/\1/' | tr -d ' ,' | grep -q '^[A-Za-z0-9_]*$' || sym="_Z${#name}${name}I4fakeEvv"
    fi
    i=$((i + 1))
    echo "void k$i(void) __asm__(\"$sym\"); void k$i(void) {}" >> "$out.c"
    echo "$inst $*" >> "$out.log"
  done
  cc -c -o "$out" "$out.c" || exit 1
  cat "$out.log" >> "$FAKE_NVCC_LOG"
  rm -f "$out.c" "$out.log"
  exit 0
fi
cat > "$out" <<'HOST'
#!/bin/sh
ckpt=$1
echo "READY 1000 1.0"
tab=$(printf '\t')
while IFS= read -r line; do
  [ "$line" = QUIT ] && exit 0
  image=$(echo "$line" | cut -f2); rest=$(echo "$line" | cut -f4- | tr '\t' ' ')
  mode=$(cat "$FAKE_MODE_FILE"); ref=0; grep -q '^act_bytes 8' "$image" && ref=1
  [ $ref = 1 ] && mode=ok; [ $ref = 1 ] && [ -s "$FAKE_MODE_FILE.precise_off" ] && mode=wrong
  logits=""; profile=0; checks=""; prompts=""; workload=""; repeat=1; cutoff=""

  set -- $rest
  while [ $# -gt 0 ]; do case "$1" in
    --prompts) prompts=$2; shift;; --logits) logits=$2; shift;; --profile) profile=1;;
    --stagger-check) checks=$(echo $2 | tr ',' ' '); shift;; --workload) workload=$2; shift;;
    --repeat) repeat=$2; shift;; --warmup) shift;; --cutoff) cutoff=$2; shift;;
  esac; shift; done
  [ $mode = die ] && { echo "cuda error fake.cu:1: an illegal memory access" >&2; exit 1; }
  [ $mode = fit ] && { echo "lane: does not fit" >&2; echo "END 4"; continue; }
  [ $mode = slow ] && sleep 30
  echo "LANE_CONTRACT: 3"; echo "DEVICE_BYTES: 1000"; echo "HOST_BYTES: 0"; echo "MOVED: 0"
  out=$(mktemp); refl=$(mktemp)
  "$FAKE_LT" reference "$ckpt" --prompts $prompts --logits $refl > $out || { echo "END 1"; continue; }
  while read t; do
    echo "$t"; echo "PREFILL_MS: 1.5"; echo "DECODE_MS_PER_TOKEN: 0.5"; echo "DECODE_TOK_PER_S: 2000"
  done < $out
  cut=0
  if [ -n "$workload" ]; then
    p=${workload%,*}; g=${workload#*,}; i=1
    total=$(awk "BEGIN { print 8.0 + 0.2 * ($g - 1) }")
    if [ -n "$cutoff" ] && awk "BEGIN { exit !($total > ${cutoff#*=}) }"; then
      echo "CUTOFF: $p $g 8.0 0.2 $total ${cutoff#*=}"; cut=1; repeat=0
    fi
    while [ $i -le $repeat ]; do echo "WORKLOAD: $i $p $g 8.$i 0.2 3$i.5"; i=$((i+1)); done
  fi
  [ $profile = 1 ] && [ $cut = 0 ] && { echo "PROFILE: gemv l0_q 12.5"; echo "PROFILE_TOTAL_US: 12.5"; echo "PROFILE_RUNS: 1 7"; }
  if [ -n "$logits" ]; then
    if [ $mode = wrong ]; then head -c $(stat -c %s $refl) /dev/zero | tr '\0' '\077' > $logits; else cp $refl $logits; fi
    echo "LOGITS_HASH: 0123456789abcdef"
  fi
  for s in $checks; do
    if [ $mode = race ]; then echo "STAGGER_CHECK: $s differs"; else echo "STAGGER_CHECK: $s same"; fi
  done
  echo "PHASE_MS: prompts 3.0"
  rm -f $out $refl
  echo "END 0"
done
HOST
chmod +x "$out"
)SH";

// A runner over a synthesized checkpoint with the stand-in nvcc.
struct Bench {
  test::TempDir dir;
  std::filesystem::path checkpoint = dir / "tiny.gguf";
  std::unique_ptr<Runner> runner;
  LeasedPlan plan;

  ~Bench() {
    runner.reset();
    unsetenv("LT_NVCC");  // the stand-in nvcc is this bench's alone
  }

  Bench() {
    auto s = test::run(test::cli() + " synth --preset tiny-qwen3 -q -o " + checkpoint.string());
    EXPECT_EQ(s.status, 0) << s.out;
    auto nvcc = dir / "nvcc";
    std::ofstream(nvcc) << kFakeNvcc;
    std::filesystem::permissions(nvcc, std::filesystem::perms::owner_all);
    setenv("LT_NVCC", nvcc.c_str(), 1);
    setenv("FAKE_LT", test::cli().c_str(), 1);
    setenv("FAKE_NVCC_LOG", (dir / "nvcc.log").c_str(), 1);
    setenv("FAKE_MODE_FILE", (dir / "mode").c_str(), 1);
    unsetenv("FAKE_NVCC_FAIL");
    unsetenv("FAKE_NVCC_FAIL_SHARED");
    CudaOptions o;
    o.gpu = parse_nvidia_smi_line("NVIDIA H200, 550.54.15, 143771 MiB, 1980 MHz, 2619 MHz, 9.0");
    o.cache_dir = dir / "lanes";
    o.build_threads = 2;
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
    plan.workload_prompt = 16;
    plan.workload_gen = 4;
    plan.verify = true;
    plan.profile = true;
  }
  Result measure(const char* mode) {
    std::ofstream(dir / "mode") << mode << "\n";
    return runner->prepare(plan, checkpoint)();
  }
  // How many kernels the stand-in nvcc compiled.
  size_t modules_compiled() {
    std::ifstream in(dir / "nvcc.log");
    size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
};

TEST(CudaRunner, MeasuresAndChecksAValidLaneInOneRequest) {
  Bench b;
  auto r = b.measure("ok");
  EXPECT_TRUE(r.valid) << r.failure << ": " << r.reason << "\n" << r.error;
  EXPECT_TRUE(r.verified);
  // The workload's three runs: decode 0.2 ms a token, prefill 8.1 / 8.2 / 8.3 ms, totals 31.5 / 32.5 / 33.5.
  EXPECT_DOUBLE_EQ(r.median_ms, 0.2);
  EXPECT_DOUBLE_EQ(r.prefill_ms, 8.2);
  EXPECT_DOUBLE_EQ(r.workload_ms, 32.5);
  EXPECT_DOUBLE_EQ(r.tok_per_s, 5000);
  EXPECT_DOUBLE_EQ(r.profile["total_us"].get<double>(), 12.5);
  EXPECT_EQ(r.profile["forms"][0]["runs"], 7);
  EXPECT_TRUE(r.tokens_equal);
  EXPECT_TRUE(r.stagger_equal);
  EXPECT_DOUBLE_EQ(r.argmax_agree, 1);
  EXPECT_EQ(r.logits_hash.size(), 16u);
  EXPECT_EQ(r.environment["gpu"], "NVIDIA H200");
  EXPECT_GT(r.cost["load_s"].get<double>(), 0);  // the first plan started the host
  EXPECT_GE(r.cost["run_s"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(r.cost["phases_s"]["prompts"].get<double>(), 0.003);
}

TEST(CudaRunner, ScreensWithoutTheStaggerChecks) {
  Bench b;
  b.plan.verify = false;
  auto r = b.measure("race");  // a race only the stagger checks would see
  EXPECT_TRUE(r.valid) << r.reason;
  EXPECT_FALSE(r.verified);
  EXPECT_FALSE(r.stagger_equal);
  b.plan.verify = true;
  auto v = b.measure("race");
  EXPECT_FALSE(v.valid);
  EXPECT_FALSE(v.verified);
  EXPECT_EQ(v.failure, failure::kRace) << v.reason;
}

// A screen far behind the job's best stops after its first run: its figures are that run's, with no profile; a screen
// near the best and a verification run in full.
TEST(CudaRunner, AScreenPastItsCutoffStopsAfterItsFirstRun) {
  Bench b;
  b.plan.verify = false;
  b.plan.cutoff_on = "workload";
  b.plan.cutoff_factor = 1.5;
  b.plan.best_ms->store(5);  // the limit: 7.5 ms; the first run's estimate 8.0 + 3 x 0.2 = 8.6 ms
  auto cut = b.measure("ok");
  ASSERT_TRUE(cut.valid) << cut.reason << cut.error;
  EXPECT_TRUE(cut.cut_off());
  EXPECT_DOUBLE_EQ(cut.cost["cutoff_ms"].get<double>(), 7.5);
  EXPECT_DOUBLE_EQ(cut.workload_ms, 8.6);
  EXPECT_DOUBLE_EQ(cut.prefill_ms, 8.0);
  EXPECT_DOUBLE_EQ(cut.median_ms, 0.2);
  EXPECT_TRUE(cut.profile.empty());
  EXPECT_TRUE(cut.tokens_equal);  // the checks ran all the same

  b.plan.best_ms->store(30);  // the limit 45 ms: the three runs and the profile
  auto near = b.measure("ok");
  ASSERT_TRUE(near.valid) << near.reason;
  EXPECT_FALSE(near.cut_off());
  EXPECT_DOUBLE_EQ(near.workload_ms, 32.5);
  EXPECT_FALSE(near.profile.empty());

  b.plan.best_ms->store(5);
  b.plan.verify = true;  // a verification is never cut off
  auto v = b.measure("ok");
  ASSERT_TRUE(v.verified) << v.reason;
  EXPECT_FALSE(v.cut_off());
  EXPECT_DOUBLE_EQ(v.workload_ms, 32.5);
}

TEST(CudaRunner, ASecondConfigurationSharingKernelsCompilesNone) {
  Bench b;
  ASSERT_TRUE(b.measure("ok").valid);
  const size_t first = b.modules_compiled();
  EXPECT_GT(first, 5u);
  // The first configuration's kernels in fewer modules than kernels: those of one library part share theirs.
  size_t cubins = 0;
  for (const auto& e : std::filesystem::directory_iterator(b.dir / "lanes" / "kernels" / "sm_90"))
    cubins += e.path().extension() == ".cubin";
  EXPECT_LT(cubins, first / 2);
  // gemv_warps changes grids and blocks, not a kernel instance: every module is found built.
  b.plan.knobs = {{"numerics", "dequant"}, {"gemv_warps", 4}};
  auto r = b.measure("ok");
  ASSERT_TRUE(r.valid) << r.reason;
  EXPECT_EQ(b.modules_compiled(), first);
  EXPECT_EQ(r.cost["kernels_built"], 0);
  // Two rows a warp: the GEMVs are other instances, the rest is shared.
  b.plan.knobs = {{"numerics", "dequant"}, {"gemv_rows_per_warp", 2}};
  auto two = b.measure("ok");
  ASSERT_TRUE(two.valid) << two.reason;
  const size_t added = b.modules_compiled() - first;
  EXPECT_GT(added, 0u);
  EXPECT_LT(added, first / 2);
  EXPECT_EQ(two.cost["kernels_built"].get<size_t>(), added);
  EXPECT_EQ(b.runner->stats()["kernels_built"].get<size_t>(), first + added);
}

TEST(CudaRunner, ClassifiesFailuresAndOutlivesADeadHost) {
  Bench b;
  auto wrong = b.measure("wrong");
  EXPECT_EQ(wrong.failure, failure::kWrongResults) << wrong.reason;
  auto fit = b.measure("fit");
  EXPECT_EQ(fit.failure, failure::kDoesNotFit) << fit.reason;
  auto dead = b.measure("die");
  EXPECT_EQ(dead.failure, failure::kCudaError) << dead.reason;
  EXPECT_NE(dead.error.find("illegal memory access"), std::string::npos) << dead.error;
  auto again = b.measure("ok");  // the host comes up again for the next plan
  EXPECT_TRUE(again.valid) << again.reason << again.error;
  EXPECT_GT(again.cost["load_s"].get<double>(), 0);
  b.plan.time_limit_s = 1;
  auto slow = b.measure("slow");
  EXPECT_EQ(slow.failure, failure::kTimeout) << slow.reason;
}

TEST(CudaRunner, APreciseLaneThatDisagreesWithTheCpuReferenceFailsEveryPlan) {
  Bench b;
  std::ofstream(b.dir / "mode.precise_off") << "1\n";
  auto r = b.measure("ok");
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

// A shared module that does not compile costs its instances nothing but time: each is built alone.
TEST(CudaRunner, InstancesOfASharedModuleThatFailsAreBuiltAlone) {
  Bench b;
  setenv("FAKE_NVCC_FAIL_SHARED", "1", 1);
  auto r = b.measure("ok");
  unsetenv("FAKE_NVCC_FAIL_SHARED");
  ASSERT_TRUE(r.valid) << r.reason << r.error;
  EXPECT_GT(r.cost["kernels_built"].get<size_t>(), 5u);
  EXPECT_EQ(b.runner->stats()["kernels_built"].get<size_t>(), b.modules_compiled());  // (each compiled once)
  // No instance's symbol file names a shared module's cubin (a second line), and no module's folder is left.
  for (const auto& e : std::filesystem::directory_iterator(b.dir / "lanes" / "kernels" / "sm_90")) {
    EXPECT_NE(e.path().extension(), ".building") << e.path();
    if (e.path().extension() != ".symbol") continue;
    std::ifstream in(e.path());
    std::string symbol, cubin;
    EXPECT_TRUE(in >> symbol) << e.path();
    EXPECT_FALSE(in >> cubin) << e.path() << ": " << cubin;
  }
}

TEST(KernelCache, FindsAKernelsSymbolInAnElfObject) {
  test::TempDir dir;
  const auto c = dir / "k.c", o = dir / "k.o";
  std::ofstream(c) << "void a(void) __asm__(\"_Z7lk_gemvI5lk_q8Li2ELi1EEvT_PKfS3_Pfii\"); void a(void) {}\n"
                      "void b(void) __asm__(\"_Z9lk_swigluPKfS0_Pfi\"); void b(void) {}\n";
  ASSERT_EQ(test::run("cc -c -o " + o.string() + " " + c.string()).status, 0);
  EXPECT_EQ(kernel_symbol(o, "lk_gemv<lk_q8, 2, 1>"), "_Z7lk_gemvI5lk_q8Li2ELi1EEvT_PKfS3_Pfii");
  EXPECT_EQ(kernel_symbol(o, "lk_swiglu"), "_Z9lk_swigluPKfS0_Pfi");
  EXPECT_THROW(kernel_symbol(o, "lk_argmax"), lt::Error);
  EXPECT_THROW(kernel_symbol(c, "lk_swiglu"), lt::Error);  // not an ELF object
}

// With nvcc here: a real image's kernels built in shared modules (those of one library part together), each instance
// resolved to the kernel its own module holds. A Q4_K_M lane under int8 has several instances of each GEMV template
// in one module; the precise image the checks run takes lk_act as double.
TEST(KernelCache, SharedModulesHoldEachInstancesOwnKernel) {
  const std::string nvcc = nvcc_path();
  const char* required = std::getenv("LT_REQUIRE_NVCC");
  if (nvcc.empty() || !std::filesystem::exists(nvcc)) {
    if (required && std::string(required) == "1") ADD_FAILURE() << "LT_REQUIRE_NVCC=1 but no nvcc";
    GTEST_SKIP() << "no nvcc here";
  }
  test::TempDir dir;
  synth::write(synth::Options{.preset = "tiny-llama", .type = ggml::Type::Q4_K, .mixed = true, .seed = 3},
               dir / "q4km.gguf");
  const gguf::File f = gguf::File::open(dir / "q4km.gguf");
  const model::Model m = model::recognize(f);
  knobs::Knobs precise;
  precise.numerics = knobs::Numerics::Precise;
  const lane::Image images[] = {lane::image(f, m,
                                            knobs::Knobs::from_json({{"numerics", "int8"},
                                                                     {"gemv_prequant", true},
                                                                     {"fuse_glu", true},
                                                                     {"fuse_qkv", true},
                                                                     {"gemv_rows_q6_k", 2}}),
                                            {132, 90}),
                                lane::image(f, m, precise, {132, 90})};
  ThreadPool pool(2);
  KernelCache cache(dir / "kernels", 90, pool);
  size_t kernels = 0, checked = 0;
  for (const lane::Image& img : images) {
    size_t added = 0;
    const std::vector<lane::Module> mods = cache.modules(img, &added);
    ASSERT_EQ(mods.size(), img.kernels.size());
    EXPECT_EQ(added, mods.size());
    kernels += mods.size();
    std::map<std::string, int> sharing;
    for (const lane::Module& mod : mods) ++sharing[mod.path];
    EXPECT_LT(sharing.size(), mods.size()) << "no module holds several instances";
    // Each instance of a template that has several in one module, against its own module's kernel.
    for (size_t i = 0; i < mods.size() && checked < 6; ++i) {
      const std::string& instance = img.kernels[i];
      const std::string name = instance.substr(0, instance.find('<'));
      const bool twins = std::any_of(img.kernels.begin(), img.kernels.end(), [&](const std::string& other) {
        const size_t at = std::find(img.kernels.begin(), img.kernels.end(), other) - img.kernels.begin();
        return other != instance && other.rfind(name + "<", 0) == 0 && mods[at].path == mods[i].path;
      });
      if (!twins) continue;
      const auto src = dir / ("alone" + std::to_string(checked++) + ".cu");
      std::ofstream(src) << lane::module_source(img.head, instance);
      std::string cmd;
      for (const std::string& part : lane::nvcc_module_command(src.string(), src.string() + ".cubin", 90))
        cmd += "'" + part + "' ";
      const auto out = test::run(cmd + "2>&1");
      ASSERT_EQ(out.status, 0) << out.out;
      EXPECT_EQ(mods[i].symbol, kernel_symbol(src.string() + ".cubin", instance)) << instance;
    }
  }
  EXPECT_GE(checked, 3u);
  const KernelCache::Stats st = cache.stats();
  EXPECT_EQ(st.builds, kernels);  // (the two images share none: float against double)
  // Found again, whole, by a cache over the same folder (a worker restarted).
  KernelCache again(dir / "kernels", 90, pool);
  size_t added = 1;
  EXPECT_EQ(again.modules(images[0], &added).size(), images[0].kernels.size());
  EXPECT_EQ(added, 0u);
  EXPECT_EQ(again.stats().builds, 0u);
}

}  // namespace
}  // namespace lt::worker
