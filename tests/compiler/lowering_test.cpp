// The lowering (each launch as its kernel calls, as data) and the lane image written from it: calls, slabs, shared
// memory, parameters laid out in bytes as the kernels take them, and the image's records against the schedule.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/lane_image.hpp"
#include "compiler/lane_schedule.hpp"
#include "compiler/lowering.hpp"
#include "compiler/model.hpp"
#include "compiler/synth.hpp"
#include "kernels/embedded.hpp"
#include "kernels/shapes.cuh"
#include "support/test_support.hpp"

namespace lt::lane {
namespace {

using nlohmann::json;

// A checkpoint written once for the suite, with its model.
struct Tiny {
  gguf::File file;
  model::Model model;
};
Tiny written(const test::TempDir& dir, const synth::Options& o) {
  synth::write(o, dir / "m.gguf");
  Tiny x{gguf::File::open(dir / "m.gguf"), {}};
  x.model = model::recognize(x.file);
  return x;
}
// tiny-qwen3 (q8_0).
const Tiny& tiny() {
  static test::TempDir dir;
  static const Tiny t = written(dir, synth::Options{.preset = "tiny-qwen3", .seed = 5});
  return t;
}
// tiny-llama in llama.cpp's Q4_K_M mix: v, some down projections and the logits in Q6_K.
const Tiny& q4km() {
  static test::TempDir dir;
  static const Tiny t =
      written(dir, synth::Options{.preset = "tiny-llama", .type = ggml::Type::Q4_K, .mixed = true, .seed = 5});
  return t;
}

Schedule schedule_of(const json& knobs) {
  return schedule(tiny().file, tiny().model, knobs::Knobs::from_json(knobs), knobs::Target{132, 90});
}

// The first launch of `kind` writing `output` in the form of `rows` rows.
const Launch& launch_of(const Schedule& p, int rows, const std::string& kind, const std::string& output) {
  for (const Form& f : p.forms)
    if (f.rows == rows)
      for (const Launch& l : f.launches)
        if (l.kind == kind && l.output == output) return l;
  throw Error("no launch " + kind + " " + output);
}
// How many values knob `name` may take in space `s` (0: no such knob).
size_t domain_size(const knobs::Space& s, const std::string& name) {
  for (const knobs::Domain& d : s.domains)
    if (d.name == name) return d.values.size();
  return 0;
}
const Form& form_of(const Schedule& p, int rows) {
  for (const Form& f : p.forms)
    if (f.rows == rows) return f;
  throw Error("no form of " + std::to_string(rows) + " rows");
}

// A chunk's GEMV slabs of 8 rows are one launch along y (the kernel offsets slab y's rows), the rest a launch of its
// own.
TEST(Lowering, AGemvIsOneCallAStepAndSlabsOfEightInAChunk) {
  const Schedule p = schedule_of({{"numerics", "dequant"}, {"max_chunk", 16}, {"gemv_rows_per_warp", 2}});
  const Matrix& wq = p.matrix(std::get<Gemv>(launch_of(p, 1, "gemv", "l0_q").op).w);
  const auto one = lower(p, form_of(p, 1), launch_of(p, 1, "gemv", "l0_q"));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].instance(), "lk_gemv<lk_q8, 2, 1>");
  EXPECT_EQ(one[0].grid.v[0], (wq.rows + 15) / 16);  // 8 warps of 2 rows a block
  EXPECT_EQ(one[0].block.v[0], 256u);
  EXPECT_EQ(one[0].smem, 0u);
  const auto slabs = lower(p, form_of(p, 16), launch_of(p, 16, "gemv", "l0_q"));
  ASSERT_EQ(slabs.size(), 1u);
  EXPECT_EQ(slabs[0].instance(), "lk_gemv<lk_q8, 2, 8>");
  EXPECT_EQ(slabs[0].grid.v, (std::array<unsigned, 3>{unsigned((wq.rows + 15) / 16), 2, 1}));
  EXPECT_EQ(slabs[0].params[1].place.offset, 0u);
  // 13 rows: a launch of one slab of 8, then one of 5 rows from row 8.
  const Schedule p13 = schedule_of({{"numerics", "precise"}, {"max_chunk", 16}});
  Form f13 = form_of(p13, 16);
  Launch l13 = launch_of(p13, 16, "gemv", "l0_q");
  std::get<Gemv>(l13.op).rows = 13;
  const auto odd = lower(p13, f13, l13);
  ASSERT_EQ(odd.size(), 2u);
  EXPECT_EQ(odd[0].grid.dims, 1);
  EXPECT_EQ(odd[1].instance(), "lk_gemv<lk_q8, 1, 5>");
  EXPECT_EQ(odd[1].params[1].place.offset, 8 * wq.cols);
  EXPECT_EQ(odd[1].params[3].place.offset, 8 * wq.rows);
}

TEST(Lowering, TensorCoreChunksAndFusionsThatDoNotApplyThere) {
  const Schedule p = schedule_of({{"numerics", "int8"}, {"max_chunk", 16}, {"fuse_norm", true}, {"gemm_rows", 32}});
  const auto gemm = lower(p, form_of(p, 16), launch_of(p, 16, "gemv", "l0_q"));
  ASSERT_EQ(gemm.size(), 1u);
  EXPECT_EQ(gemm[0].instance(), "lk_gemm_i8<16, false>");
  EXPECT_EQ(gemm[0].block.v[0], 128u);  // 32 rows a block: 4 warps of 8
  // The folded norm: one call in the decode step, the projection then the norm in a chunk.
  EXPECT_EQ(lower(p, form_of(p, 1), launch_of(p, 1, "gemv_norm", "l0_h2")).size(), 1u);
  const auto chunk = lower(p, form_of(p, 16), launch_of(p, 16, "gemv_norm", "l0_h2"));
  ASSERT_EQ(chunk.size(), 2u);
  EXPECT_EQ(chunk[1].kernel, "lk_add_rmsnorm");
}

// A block-format checkpoint's chunks: on the tensor cores (lk_gemm_i8qb over the codes in place) under the int8
// numerics and gemm_prequant only, with the matrix's format, and reading the copy in the layout its quantize launch
// wrote (row by row under gemm_tile); without gemm_prequant, GEMV slabs.
TEST(Lowering, BlockFormatChunksRunOnTheTensorCoresOverTheirCopy) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  auto of = [&](const json& k) { return schedule(file, m, knobs::Knobs::from_json(k), knobs::Target{132, 90}); };
  const json base = {{"numerics", "int8"}, {"max_chunk", 16}, {"gemm_prequant", true}, {"fuse_glu", true}};
  const Schedule p = of(base);
  const Matrix& wq = p.matrix(std::get<Gemv>(launch_of(p, 16, "gemv", "l0_q").op).w);
  ASSERT_EQ(wq.type, ggml::Type::Q4_K);
  const auto q = lower(p, form_of(p, 16), launch_of(p, 16, "gemv", "l0_q"));
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].instance(), "lk_gemm_i8qb<LK_Q4_K, false, 1>");
  EXPECT_EQ(q[0].grid.v[0], 2u);                   // 16 rows: 2 groups of 8, one a block (along x: L2 reuse)
  EXPECT_EQ(q[0].grid.v[1], (wq.rows + 63) / 64);  // 4 warps of 16 rows
  // Q4_K_M keeps some matrices in Q6_K: each GEMM names its own format.
  std::set<std::string> kernels;
  for (const Launch& l : form_of(p, 16).launches)
    for (const KernelCall& c : lower(p, form_of(p, 16), l)) kernels.insert(c.instance());
  EXPECT_TRUE(kernels.count("lk_gemm_i8qb<LK_Q4_K, true, 1>"));  // gate and up, one launch
  EXPECT_TRUE(kernels.count("lk_gemm_i8qb<LK_Q6_K, false, 1>"));
  EXPECT_TRUE(kernels.count("lk_quantize_i8<true>"));
  for (const std::string& k : kernels)  // (the logits project the chunk's last row alone: a GEMV of one row)
    EXPECT_TRUE(k.find("lk_gemv") == std::string::npos || k.ends_with(", 1, 1>")) << k;
  // gemm_tile: the copy row by row, tiles with the weights unpacked on the way (lk_gemm_i8tb): lk_gemm_i8t's shape,
  // its own shared memory.
  json tiled = base;
  tiled["gemm_tile"] = 64;
  const Schedule t = of(tiled);
  const auto tq = lower(t, form_of(t, 16), launch_of(t, 16, "gemv", "l0_q"));
  ASSERT_EQ(tq.size(), 1u);
  EXPECT_EQ(tq[0].instance(), "lk_gemm_i8tb<LK_Q4_K, false, 32>");
  EXPECT_EQ(tq[0].smem, size_t(lk_gemm_i8tb_smem(1, 32)));
  EXPECT_EQ(tq[0].block.v[0], 128u);
  EXPECT_TRUE(lower(t, form_of(t, 16), launch_of(t, 16, "quantize", "xq_l0_h")).at(0).instance() ==
              "lk_quantize_i8<false>");
  // Without gemm_prequant: slabs of 8 rows.
  json slabs = base;
  slabs["gemm_prequant"] = false;
  const Schedule s = of(slabs);
  const auto g = lower(s, form_of(s, 16), launch_of(s, 16, "gemv", "l0_q"));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].kernel, "lk_gemv");
  EXPECT_EQ(g[0].grid.v[1], 2u);
}

// gemm_half: a chunk's activations rounded to f16 once (lk_half_rows into an f16 copy), then every projection of
// them on the tensor cores in f16 whatever its format (Q4_K_M's Q4_K and Q6_K alike, under dequant too): lk_gemm_h,
// 64 weight rows by 64 activation rows a block for the tiny model's small grids (the fused gate/up GEMM 128 by 128: 64
// rows of each), the shared memory of kernels/shapes.cuh; its k too short to split. The decode step keeps its GEMVs and
// their int8 copy. The gate/up GEMM writes the down projection's copy and, that being s's only reader, not s.
TEST(Lowering, HalfGemmsReadTheChunksF16Copy) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  for (const char* numerics : {"dequant", "int8"}) {
    const json j = {{"numerics", numerics},
                    {"max_chunk", 256},
                    {"gemm_half", true},
                    {"fuse_glu", true},
                    {"gemv_prequant", std::string(numerics) == "int8"}};
    const Schedule p = schedule(file, m, knobs::Knobs::from_json(j), knobs::Target{132, 90});
    const Launch& q = launch_of(p, 256, "gemv", "l0_q");
    ASSERT_TRUE(std::get<Gemv>(q.op).xq.has_value()) << numerics;
    const auto c = lower(p, form_of(p, 256), q);
    ASSERT_EQ(c.size(), 1u);
    const Matrix& wq = p.matrix(std::get<Gemv>(q.op).w);
    EXPECT_EQ(c[0].instance(), "lk_gemm_h<lk_blk<LK_Q4_K>, false, 64, 64>");  // (a small grid: 64x64 blocks)
    EXPECT_EQ(c[0].grid.v[0], (wq.rows + 63) / 64);
    EXPECT_EQ(c[0].grid.v[1], 4u);
    EXPECT_EQ(c[0].grid.v[2], 1u);
    EXPECT_EQ(c[0].block.v[0], 256u);
    EXPECT_EQ(c[0].smem, size_t(lk_gemm_h_smem(64, 64)));
    ASSERT_EQ(c[0].params.size(), 11u);  // (no split: no workspace, no counts; no f16 copy of q)
    EXPECT_EQ(c[0].params[8].place.space, Place::Space::Null);
    EXPECT_EQ(c[0].params[10].place.space, Place::Space::Null);
    EXPECT_FALSE(p.carried.count("gemm_part") || p.carried.count("gemm_count"));
    // q's copy is its norm's to write (HALF), the down projection's the gate/up GEMM's; the attention's output keeps
    // lk_half_rows (a launch of its own).
    const std::string& xq = *std::get<Gemv>(q.op).xq;
    EXPECT_THROW(launch_of(p, 256, "half", xq), Error);
    const Launch& norm = launch_of(p, 256, "norm", "l0_h");
    EXPECT_TRUE(std::get<AddNorm>(norm.op).xq_half);
    EXPECT_EQ(std::get<AddNorm>(norm.op).xq, xq);
    const auto nc = lower(p, form_of(p, 256), norm);
    ASSERT_EQ(nc.size(), 1u);
    EXPECT_EQ(nc[0].instance().substr(0, 29), "lk_add_rmsnorm<false, false, ");
    EXPECT_EQ(nc[0].targs.back(), "true");
    const Launch& glu = launch_of(p, 256, "gemv_glu", "l0_s");
    ASSERT_TRUE(std::get<GemvGlu>(glu.op).out_half);
    const auto gc = lower(p, form_of(p, 256), glu);
    ASSERT_EQ(gc.size(), 1u);
    EXPECT_NE(gc[0].params[10].place.space, Place::Space::Null);
    EXPECT_EQ(gc[0].params[10].place.name, *std::get<GemvGlu>(glu.op).out_xq);
    // (and only the copy: the down projection reads s through it, so s's f32 values are not stored)
    EXPECT_TRUE(std::get<GemvGlu>(glu.op).half_only);
    EXPECT_EQ(gc[0].params[4].place.space, Place::Space::Null);
    const Launch& step_glu = launch_of(p, 1, "gemv_glu", "l0_s");  // (the decode step's GLU writes s)
    EXPECT_FALSE(std::get<GemvGlu>(step_glu.op).half_only);
    std::set<std::string> kernels;
    int halves = 0;
    for (const Launch& l : form_of(p, 256).launches)
      for (const KernelCall& k : lower(p, form_of(p, 256), l))
        kernels.insert(k.instance()), halves += k.kernel == "lk_half_rows";
    EXPECT_EQ(halves, int(m.layers)) << numerics;                                          // (the attention's outputs)
    EXPECT_TRUE(kernels.count("lk_gemm_h<lk_blk<LK_Q4_K>, true, 128, 128>")) << numerics;  // gate and up, one launch
    EXPECT_TRUE(kernels.count("lk_gemm_h<lk_blk<LK_Q6_K>, false, 64, 64>")) << numerics;
    // (the chunk's int8 copy is gone; under gemv_prequant its logits row, a GEMV of one row, keeps one)
    EXPECT_FALSE(kernels.count("lk_quantize_i8<true>")) << numerics;
    // The decode step: GEMVs, over the int8 copy under int8.
    std::set<std::string> step;
    for (const Launch& l : form_of(p, 1).launches)
      for (const KernelCall& k : lower(p, form_of(p, 1), l)) step.insert(k.kernel);
    EXPECT_FALSE(step.count("lk_gemm_h") || step.count("lk_half_rows")) << numerics;
    EXPECT_EQ(step.count("lk_quantize_i8"), std::string(numerics) == "int8" ? 1u : 0u) << numerics;
  }
  // The rules: not under precise, chunks of 16 or more, the int8 GEMMs' knobs at their defaults.
  const knobs::Space s = knobs::space(m, knobs::Target{132, 90});
  auto why = [&](const json& j) { return s.why_invalid(knobs::Knobs::from_json(j)); };
  EXPECT_NE(why({{"numerics", "precise"}, {"gemm_half", true}}).find("precise"), std::string::npos);
  EXPECT_NE(why({{"numerics", "dequant"}, {"gemm_half", true}, {"max_chunk", 4}}).find("max_chunk"), std::string::npos);
  EXPECT_NE(why({{"numerics", "int8"}, {"gemm_half", true}, {"gemm_prequant", true}}).find("gemm_prequant"),
            std::string::npos);
  EXPECT_EQ(why({{"numerics", "int8"}, {"gemm_half", true}, {"max_chunk", 256}}), "");
}

// gemm_half's shapes at the 8B's and qwen3-0.6b's matrices on an H200 (132 SMs), chunks of 256 rows, as measured
// (bench/NOTES.md session 14): 64x128 blocks, 64x64 where 128 would leave half the SMs idle, split along k while the
// blocks fit at once (two 64x64 blocks an SM) and each part keeps 6 stages; the fused gate/up GEMM 128x128 unsplit;
// never beside side streams; the workspace a tile's parts' sums.
TEST(Lowering, HalfGemmsSplitSmallGridsAlongK) {
  Schedule p;
  p.target = knobs::Target{132, 90};
  auto shape = [&](size_t n, size_t k, bool glu, int rows) {
    return half_gemm_shape(p, Matrix{"w", nullptr, n, k, ggml::Type::Q4_K, 1}, glu, rows);
  };
  const HalfGemm q = shape(4096, 4096, false, 256), kv = shape(1024, 4096, false, 256);
  EXPECT_EQ(q.bm, 64);
  EXPECT_EQ(q.bn, 128);
  EXPECT_EQ(q.gx, 64u);
  EXPECT_EQ(q.gy, 2u);
  EXPECT_EQ(q.split, 1);  // 128 blocks: one an SM already (split 2: 71 us against 53)
  EXPECT_EQ(kv.bn, 64);   // 32 tiles of 128 rows: 64 of 64
  EXPECT_EQ(kv.gy, 4u);
  EXPECT_EQ(kv.split, 4);  // 256 blocks of 8 stages (28 us; unsplit 128x128 56)
  EXPECT_EQ(kv.workspace(), 64u * 4 * 64 * 64);
  EXPECT_EQ(shape(4096, 14336, false, 256).split, 1);
  const HalfGemm gu = shape(14336, 4096, true, 256);
  EXPECT_EQ(gu.bm, 128);
  EXPECT_EQ(gu.bn, 128);
  EXPECT_EQ(gu.gx, 224u);  // 64 outputs a block
  EXPECT_EQ(gu.split, 1);
  const HalfGemm q6 = shape(2048, 1024, false, 256);  // qwen3-0.6b's q: 8 stages, too few to split
  EXPECT_EQ(q6.bn, 64);
  EXPECT_EQ(q6.split, 1);
  EXPECT_EQ(shape(1024, 3072, false, 256).split, 4);  // its down: 24 stages
  EXPECT_EQ(shape(3072, 1024, true, 256).split, 1);
  EXPECT_EQ(shape(256, 4096, false, 32).bn, 64);  // chunks of 64 rows or fewer: 64-row tiles
  p.target = knobs::Target{108, 80};              // (an A100)
  EXPECT_EQ(shape(4096, 4096, false, 256).split, 1);
  EXPECT_EQ(shape(1024, 4096, false, 256).split, 2);
  p.target = knobs::Target{132, 90};
  p.knobs.side_streams = true;
  EXPECT_EQ(shape(1024, 4096, false, 256).split, 1);
}

// On Hopper the large GEMMs of chunks of 512 rows or more take lk_gemm_w (wgmma): two warpgroups a block (128 weight
// rows, under GLU 64 outputs), 128 activation rows, 128 of k a stage (bench/NOTES.md session 24: q, down and gate/up
// of the 8B 1.05-1.54x lk_gemm_h's); the fused gate/up GEMM (narrow or short too) and the long rows (the 8B's down)
// 256 activation rows by 64 of k (session 46); narrow, short, 256-row and A100 GEMMs keep lk_gemm_h.
TEST(Lowering, LargeHalfGemmsOnHopperTakeWgmma) {
  Schedule p;
  p.target = knobs::Target{132, 90};
  auto shape = [&](size_t n, size_t k, bool glu, int rows) {
    return half_gemm_shape(p, Matrix{"w", nullptr, n, k, ggml::Type::Q4_K, 1}, glu, rows);
  };
  const HalfGemm q = shape(4096, 4096, false, 512);
  EXPECT_EQ(q.wgs, 2);
  EXPECT_EQ(q.ks, 128);
  EXPECT_EQ(q.bn, 128);
  EXPECT_EQ(q.bm, 128);
  EXPECT_EQ(q.gx, 32u);
  EXPECT_EQ(q.gy, 4u);
  EXPECT_EQ(q.split, 1);  // 128 blocks: one an SM
  EXPECT_EQ(q.workspace(), 0u);
  const HalfGemm gu = shape(14336, 4096, true, 512);
  EXPECT_EQ(gu.wgs, 2);
  EXPECT_EQ(gu.gx, 224u);  // 64 outputs a block
  EXPECT_EQ(gu.bn, 256);
  EXPECT_EQ(gu.ks, 64);
  EXPECT_EQ(gu.gy, 2u);
  EXPECT_EQ(gu.split, 1);  // 448 tiles
  const HalfGemm down = shape(4096, 14336, false, 512);
  EXPECT_EQ(down.wgs, 2);
  EXPECT_EQ(down.bn, 256);
  EXPECT_EQ(down.ks, 64);
  EXPECT_EQ(down.split, 2);  // 64 tiles of 224 stages: two parts each (gemm_bench's choice too)
  EXPECT_EQ(shape(4096, 14336, false, 1024).wgs, 2);
  EXPECT_EQ(shape(4096, 14336, false, 1024).gy, 4u);
  EXPECT_EQ(shape(4096, 14336, false, 256).wgs, 0);   // (256 rows: lk_gemm_h whatever the shape)
  const HalfGemm gu6 = shape(3072, 1024, true, 512);  // qwen3-0.6b's gate/up: narrow and short, fused
  EXPECT_EQ(gu6.wgs, 2);
  EXPECT_EQ(gu6.bn, 256);
  EXPECT_EQ(gu6.gx, 48u);
  EXPECT_EQ(shape(1024, 4096, false, 512).wgs, 0);  // k and v: narrow
  EXPECT_EQ(shape(2048, 1024, false, 512).wgs, 0);  // qwen3-0.6b's q: short
  EXPECT_EQ(shape(1024, 3072, false, 512).wgs, 0);  // and its down
  EXPECT_EQ(shape(4096, 4096, false, 256).wgs, 0);
  p.target = knobs::Target{108, 80};
  EXPECT_EQ(shape(4096, 4096, false, 512).wgs, 0);
}

// A chunk's fused q/k/v under gemm_half is one grouped GEMM a run of parts in one format (lk_gemm_h_parts /
// lk_gemm_w_parts: one grid over the parts' output tiles in order), so that k's and v's narrow grids run beside q's:
// tiny-llama's Q4_K_M layers with v in Q4_K group all three, those with a Q6_K v group q and k and keep v alone; the
// group's parameters name each part's matrix, bias, output and rows (none past the group's), its output tiles, whole
// tiles and split. Not under the int8 GEMMs (a part a launch) nor in the decode step (lk_gemv_parts).
TEST(Lowering, AChunksQkvIsOneGroupedGemmAFormat) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  const json k = {{"numerics", "int8"}, {"gemm_half", true},      {"gemv_prequant", true},
                  {"fuse_qkv", true},   {"fuse_qkv_mixed", true}, {"max_chunk", 64}};
  const Schedule p = schedule(file, m, knobs::Knobs::from_json(k), knobs::Target{132, 90});
  int three = 0, two = 0;
  for (size_t l = 0; l < m.layers; ++l) {
    const auto calls = lower(p, form_of(p, 64), launch_of(p, 64, "gemv_qkv", "l" + std::to_string(l) + "_q"));
    const bool mixed = m.layer[l].wv->type != m.layer[l].wq->type;
    ASSERT_EQ(calls.size(), mixed ? 2u : 1u) << l;
    const KernelCall& g = calls[0];
    EXPECT_EQ(g.instance(), "lk_gemm_h_parts<lk_blk<LK_Q4_K>, 64, 64>") << l;  // (64 rows: 64-row tiles)
    const size_t parts = mixed ? 2 : 3;
    size_t gx = 0;
    for (size_t i = 0; i < parts; ++i) gx += (i == 0 ? m.heads * m.head_dim : m.kv_heads * m.head_dim) / 64;
    ASSERT_EQ(g.params.size(), 9u);
    const Arg& group = g.params[0];
    ASSERT_EQ(group.members.size(), 4u);  // the matrices, biases, outputs and rows
    for (const Arg& field : group.members) ASSERT_EQ(field.members.size(), 3u);
    EXPECT_EQ(group.members[3].members[0].i, int64_t(m.heads * m.head_dim)) << l;
    EXPECT_EQ(group.members[3].members[1].i, int64_t(m.kv_heads * m.head_dim)) << l;
    EXPECT_EQ(group.members[3].members[2].i, mixed ? 0 : int64_t(m.kv_heads * m.value_dim)) << l;
    EXPECT_EQ(group.members[2].members[2].place.space == Place::Space::Null, mixed) << l;
    EXPECT_EQ(g.params[4].i, int64_t(gx)) << l;  // the output tiles
    EXPECT_EQ(g.params[5].i, int64_t(gx)) << l;  // all whole: one row tile, a small grid
    EXPECT_EQ(g.params[6].i, 1) << l;
    EXPECT_EQ(g.grid.v[0], gx) << l;
    if (mixed) {
      EXPECT_EQ(calls[1].instance(), "lk_gemm_h<lk_blk<LK_Q6_K>, false, 64, 64>") << l;
      ++two;
    } else {
      ++three;
    }
  }
  EXPECT_GT(three, 0);
  EXPECT_GT(two, 0);
  // The int8 GEMMs keep a part a launch; the decode step its fused GEMV.
  json i8 = k;
  i8.erase("gemm_half");
  i8["gemm_prequant"] = true;
  const Schedule q = schedule(file, m, knobs::Knobs::from_json(i8), knobs::Target{132, 90});
  const auto apart = lower(q, form_of(q, 64), launch_of(q, 64, "gemv_qkv", "l0_q"));
  EXPECT_EQ(apart.size(), 3u);
  for (const KernelCall& c : apart) EXPECT_EQ(c.kernel.find("_parts"), std::string::npos);
  EXPECT_EQ(lower(p, form_of(p, 1), launch_of(p, 1, "gemv_qkv", "l0_q"))[0].kernel.rfind("lk_gemv_parts", 0), 0u);
}

// A grouped GEMM's shape: the group as wide as its parts together, so the 8B's q/k/v (4,096 + 1,024 + 1,024 rows) take
// lk_gemm_w at 512 rows where k and v alone would not; only the tiles past the GPU's whole waves split along k
// (measured on an H100, session 45: the 8B's q/k/v 150.6 -> 114.9 us a layer, prefill(512) 1.033x; the whole grid
// split two ways 249 us), up to 4 ways while they fit one more wave and each part keeps 6 stages; the workspace and
// counts the split tiles'; every tile's parts covered once by the units (lk_gemm_unit).
TEST(Lowering, AGroupedGemmSplitsOnlyItsLastWave) {
  Schedule p;
  p.target = knobs::Target{132, 90};
  const Matrix q{"q", nullptr, 4096, 4096, ggml::Type::Q4_K, 1}, kv{"k", nullptr, 1024, 4096, ggml::Type::Q4_K, 1};
  const HalfGemm qkv = half_gemm_shape(p, {&q, &kv, &kv}, 512);
  EXPECT_EQ(qkv.wgs, 2);
  EXPECT_EQ(qkv.gx, 48u);  // 32 + 8 + 8 tiles of 128 rows
  EXPECT_EQ(qkv.gy, 4u);
  EXPECT_EQ(qkv.full, 132u);  // one wave whole, 60 tiles left
  EXPECT_EQ(qkv.split, 2);    // 120 blocks: one more wave
  EXPECT_EQ(qkv.units(), 252u);
  EXPECT_EQ(qkv.workspace(), 60u * 2 * 128 * 128);
  const HalfGemm qk = half_gemm_shape(p, {&q, &kv}, 512);
  EXPECT_EQ(qk.full, 132u);  // 160 tiles: 28 left, 4 parts each
  EXPECT_EQ(qk.split, 4);
  EXPECT_EQ(qk.units(), 244u);
  EXPECT_EQ(half_gemm_shape(p, {&kv, &kv}, 512).wgs, 0);  // 2,048 rows: lk_gemm_h
  // qwen3-0.6b's q/k/v (k 1,024: 8 stages a tile, too few to split) and 256 rows (lk_gemm_h: 192 tiles of 64 x 128).
  const Matrix q6{"q", nullptr, 2048, 1024, ggml::Type::Q4_K, 1}, kv6{"k", nullptr, 1024, 1024, ggml::Type::Q4_K, 1};
  const HalfGemm small = half_gemm_shape(p, {&q6, &kv6, &kv6}, 512);
  EXPECT_EQ(small.wgs, 0);
  EXPECT_EQ(small.split, 1);
  EXPECT_EQ(small.full, small.gx * small.gy);
  EXPECT_EQ(small.workspace(), 0u);
  const HalfGemm h256 = half_gemm_shape(p, {&q, &kv, &kv}, 256);
  EXPECT_EQ(h256.wgs, 0);
  EXPECT_EQ(h256.gx * h256.gy, 192u);
  EXPECT_EQ(h256.split, 2);
  // The rule itself, and a tail already whole.
  EXPECT_EQ(lk_gemm_tail_split(264, 32, 132), 1);
  EXPECT_EQ(lk_gemm_tail_split(60, 32, 132), 2);
  EXPECT_EQ(lk_gemm_tail_split(30, 32, 132), 4);
  EXPECT_EQ(lk_gemm_tail_split(30, 12, 132), 2);  // (6 stages a part)
  EXPECT_EQ(lk_gemm_tail_split(30, 8, 132), 1);
  p.knobs.side_streams = true;  // (split launches would share the workspace)
  EXPECT_EQ(half_gemm_shape(p, {&q, &kv, &kv}, 512).split, 1);
  // Every tile's parts exactly once, each split tile's parts in its own slot.
  for (const HalfGemm& h : {qkv, qk, h256}) {
    std::map<int, std::set<int>> seen;
    std::set<int> slots;
    for (int u = 0; u < int(h.units()); ++u) {
      lk_ksplit ks{};
      const int tile = lk_gemm_unit(u, int(h.full), h.split, ks);
      ASSERT_LT(tile, int(h.gx * h.gy));
      EXPECT_EQ(ks.zs, tile < int(h.full) ? 1 : h.split);
      EXPECT_TRUE(seen[tile].insert(ks.z).second);
      if (ks.zs > 1) {
        EXPECT_LT(ks.slot, int(h.split_tiles()));
        EXPECT_EQ(ks.slot, tile - int(h.full));
        slots.insert(ks.slot);
      }
    }
    EXPECT_EQ(seen.size(), h.gx * h.gy);
    for (const auto& [tile, zs] : seen) EXPECT_EQ(zs.size(), tile < int(h.full) ? 1u : size_t(h.split));
    EXPECT_EQ(slots.size(), h.split_tiles());
  }
}

// norm_fold: in the decode step every add + norm after an o or down projection folds into it (lk_gemv_fold: the
// residual, the norm's weights, the copy and the spans' sums), so the only norm launch left is the first layer's
// (after the embedding); every projection of a folded copy takes the spans' sums and the norm's eps in its lk_xq; the
// chunks keep their norms. A mixture, whose routers read every FFN norm in f32 (and whose attention norms follow the
// experts' combine), has no norm to fold: the knob's domain leaves it out; it needs the int8 copy, and is refused
// without it, saying why.
TEST(Lowering, FoldedNormsEndTheirProjectionsAndScaleTheirReaders) {
  const json k = {{"numerics", "int8"}, {"gemv_prequant", true}, {"norm_fold", true},
                  {"fuse_qkv", true},   {"fuse_glu", true},      {"max_chunk", 16}};
  const Schedule p = schedule(q4km().file, q4km().model, knobs::Knobs::from_json(k), knobs::Target{132, 90});
  const Form& step = form_of(p, 1);
  int folds = 0, norms = 0;
  std::set<std::string> scaled;  // (the folded copies some projection reads scaled)
  for (const Launch& l : step.launches) {
    if (std::holds_alternative<AddNorm>(l.op)) ++norms;
    const auto calls = lower(p, step, l);
    for (const KernelCall& c : calls) {
      if (c.kernel == "lk_gemv_fold") {
        ++folds;
        ASSERT_EQ(c.params.size(), 9u) << c.instance();
        EXPECT_EQ(c.params[6].type, "lk_norm_tail");
        EXPECT_EQ(c.params[6].members.at(2).kind, Arg::Kind::Pointer);  // (out: null, unwritten)
        EXPECT_TRUE(step.buffers.count(c.params[8].place.name)) << c.params[8].place.name;
      }
      for (const Arg& a : c.params)
        if (a.type == "lk_xq" && a.members.at(3).kind == Arg::Kind::Pointer && !a.members[3].place.name.empty()) {
          scaled.insert(a.members[0].place.name);
          EXPECT_EQ(step.span_sums.at(a.members[0].place.name), a.members[3].place.name);
        }
    }
  }
  EXPECT_EQ(folds, int(2 * q4km().model.layers));  // (each layer's o and down: the last down's is the output's norm)
  EXPECT_EQ(norms, 1);
  EXPECT_EQ(scaled.size(), step.span_sums.size());  // (each layer's q/k/v but the first's and gate/up, the logits)
  EXPECT_EQ(step.span_sums.size(), size_t(folds));
  for (const Form& f : p.forms)
    if (f.rows > 1) {
      EXPECT_TRUE(f.span_sums.empty());
    }
  static test::TempDir dir;
  const Tiny moe = written(dir, synth::Options{.preset = "tiny-moe", .seed = 3});
  EXPECT_EQ(domain_size(knobs::space(moe.model, {132, 90}), "norm_fold"), 1u);  // (its routers read every FFN norm)
  EXPECT_EQ(domain_size(knobs::space(q4km().model, {132, 90}), "norm_fold"), 2u);
  const knobs::Space s = knobs::space(q4km().model, {132, 90});
  EXPECT_NE(s.why_invalid(knobs::Knobs::from_json({{"numerics", "int8"}, {"norm_fold", true}})).find("gemv_prequant"),
            std::string::npos);
  EXPECT_NE(s.why_invalid(knobs::Knobs::from_json({{"norm_fold", true}, {"gemv_prequant", true}})).find("int8"),
            std::string::npos);
}

// norm_fold_groups: the same folds, each projection a block a 32-group of its rows (32 / RPW warps, gemv_short's
// rows a warp included: 256 threads at 4) launched over n / 32 blocks with lk_gemv_fold's parameters; it needs
// norm_fold, and its domain is norm_fold's.
TEST(Lowering, FoldedNormsInBlocksOfAGroup) {
  for (const bool short_rows : {false, true}) {
    json k = {{"numerics", "int8"}, {"gemv_prequant", true}, {"norm_fold", true}, {"norm_fold_groups", true},
              {"fuse_qkv", true},   {"fuse_glu", true},      {"max_chunk", 16},   {"gemv_short", short_rows}};
    // (gemv_short takes the tiny preset's rows where that still gives every multiprocessor two blocks: 4 of them)
    const knobs::Target target = short_rows ? knobs::Target{4, 90} : knobs::Target{132, 90};
    const Schedule p = schedule(q4km().file, q4km().model, knobs::Knobs::from_json(k), target);
    const Form& step = form_of(p, 1);
    int folds = 0;
    for (const Launch& l : step.launches)
      for (const KernelCall& c : lower(p, step, l)) {
        EXPECT_NE(c.kernel, "lk_gemv_fold");
        if (c.kernel != "lk_gemv_fold_group") continue;
        ++folds;
        const int rpw = std::stoi(c.targs.at(1)), rows = int(q4km().model.d_model);
        EXPECT_EQ(32 % rpw, 0) << c.instance();
        EXPECT_EQ(c.block.v[0], unsigned(32 / rpw * 32)) << c.instance();
        EXPECT_EQ(c.grid.v[0], unsigned(rows / 32)) << c.instance();
        EXPECT_EQ(c.params.size(), 9u) << c.instance();
        EXPECT_EQ(c.params[6].type, "lk_norm_tail");
        EXPECT_EQ(rpw, short_rows ? 4 : 1) << c.instance();
      }
    EXPECT_EQ(folds, int(2 * q4km().model.layers)) << k.dump();
  }
  const knobs::Space s = knobs::space(q4km().model, {132, 90});
  EXPECT_EQ(domain_size(s, "norm_fold_groups"), 2u);
  EXPECT_NE(s.why_invalid(
                 knobs::Knobs::from_json({{"numerics", "int8"}, {"gemv_prequant", true}, {"norm_fold_groups", true}}))
                .find("norm_fold"),
            std::string::npos);
  static test::TempDir dir;
  const Tiny moe = written(dir, synth::Options{.preset = "tiny-moe", .seed = 3});
  EXPECT_EQ(domain_size(knobs::space(moe.model, {132, 90}), "norm_fold_groups"), 1u);
}

// glu_groups: where the fused gate/up GEMV's rows are one or two units a lane of a block format or Q8_0 (the tiny
// preset's k of 256: one), the decode step's GLU is lk_gemv_glu_group (4 rows a warp, blocks of one 32-group of
// outputs: 8 warps), which writes the down projection's int8 copy, so no quantize launch is left in the step but what
// norm_fold leaves; the chunks keep theirs. An 8B's rows (k 4,096: four units a lane) are not such: the knob's domain
// leaves it out there; it needs gemv_prequant and fuse_glu.
TEST(Lowering, TheShortGluWritesTheDownsCopyInBlocksOfAGroup) {
  const json k = {{"numerics", "int8"}, {"gemv_prequant", true}, {"glu_groups", true}, {"norm_fold", true},
                  {"fuse_qkv", true},   {"fuse_glu", true},      {"max_chunk", 16},    {"glu_stage", true}};
  const Schedule p = schedule(q4km().file, q4km().model, knobs::Knobs::from_json(k), knobs::Target{132, 90});
  const Form& step = form_of(p, 1);
  int groups = 0, quantizes = 0;
  for (const Launch& l : step.launches) {
    if (std::holds_alternative<QuantizeI8>(l.op)) ++quantizes;
    if (const auto* g = std::get_if<GemvGlu>(&l.op)) {
      ASSERT_TRUE(g->out_xq.has_value());
      EXPECT_NE(std::find(l.writes.begin(), l.writes.end(), *g->out_xq), l.writes.end());
    }
    for (const KernelCall& c : lower(p, step, l)) {
      EXPECT_NE(c.kernel, "lk_gemv_glu");
      if (c.kernel != "lk_gemv_glu_group") continue;
      ++groups;
      EXPECT_EQ(c.instance().rfind("lk_gemv_glu_group<lk_blk<LK_Q4_K>, 4, 1, lk_xq, true>", 0), 0u) << c.instance();
      EXPECT_EQ(c.block.v[0], 256u);
      EXPECT_EQ(c.grid.v[0], unsigned(q4km().model.ffn / 32));
      EXPECT_GT(c.smem, 0u);  // (glu_stage's copy)
      ASSERT_EQ(c.params.size(), 7u);
      EXPECT_TRUE(step.buffers.count(c.params[6].place.name)) << c.params[6].place.name;
    }
  }
  EXPECT_EQ(groups, int(q4km().model.layers));
  EXPECT_EQ(quantizes, 0);  // (the first norm, the folds, attention and the GLUs write every copy)
  for (const Form& f : p.forms) {
    if (f.rows == 1) continue;
    for (const Launch& l : f.launches) {
      if (const auto* g = std::get_if<GemvGlu>(&l.op)) {
        EXPECT_FALSE(g->out_xq.has_value());
      }
    }
  }
  const knobs::Space s = knobs::space(q4km().model, {132, 90});
  EXPECT_EQ(domain_size(s, "glu_groups"), 2u);
  EXPECT_NE(
      s.why_invalid(knobs::Knobs::from_json({{"numerics", "int8"}, {"gemv_prequant", true}, {"glu_groups", true}}))
          .find("fuse_glu"),
      std::string::npos);
  model::Model wide = q4km().model;  // (an 8B's width: four units a lane)
  wide.d_model = 4096;
  EXPECT_EQ(domain_size(knobs::space(wide, {132, 90}), "glu_groups"), 1u);
  // Q8_0 (tiny-qwen3: k 256, one unit of 16 values a lane): the gate's sums then the up's (glu_stage's domain is
  // the block formats').
  json k8 = k;
  k8.erase("glu_stage");
  const Schedule q8 = schedule(tiny().file, tiny().model, knobs::Knobs::from_json(k8), knobs::Target{132, 90});
  int q8_groups = 0;
  for (const Launch& l : form_of(q8, 1).launches)
    for (const KernelCall& c : lower(q8, form_of(q8, 1), l)) {
      EXPECT_NE(c.kernel, "lk_gemv_glu");
      if (c.kernel != "lk_gemv_glu_group") continue;
      ++q8_groups;
      EXPECT_EQ(c.instance(), "lk_gemv_glu_group<lk_q8, 4, 1, lk_xq>");
    }
  EXPECT_EQ(q8_groups, int(tiny().model.layers));
  EXPECT_EQ(domain_size(knobs::space(tiny().model, {132, 90}), "glu_groups"), 2u);
  model::Model wide8 = tiny().model;  // (k 2,048 of Q8_0: four units a lane)
  wide8.d_model = 2048;
  EXPECT_EQ(domain_size(knobs::space(wide8, {132, 90}), "glu_groups"), 1u);
}

// A GEMV's int8 copy is an lk_xq parameter naming every field of the struct (kernels/gemv.cuh: the copy, its rows, the
// first row, norm_fold's sums and eps), a plain copy's last two null and 0: the resident host lays each parameter out
// from its members and refuses a call whose bytes differ from the kernel's (session 37's first device call: every
// gemv_prequant lane in the worker's path refused, the copies' 3 fields 16 bytes of lk_xq's 32).
TEST(Lowering, AnInt8CopyNamesEveryFieldOfItsStruct) {
  for (const bool fold : {false, true}) {
    const json k = {{"numerics", "int8"}, {"gemv_prequant", true}, {"norm_fold", fold}, {"fuse_qkv", true},
                    {"fuse_glu", true},   {"max_chunk", 16}};
    const Schedule p = schedule(q4km().file, q4km().model, knobs::Knobs::from_json(k), knobs::Target{132, 90});
    int copies = 0;
    for (const Form& f : p.forms)
      for (const Launch& l : f.launches)
        for (const KernelCall& c : lower(p, f, l))
          for (const Arg& a : c.params) {
            if (a.type != "lk_xq") continue;
            ++copies;
            ASSERT_EQ(a.members.size(), 5u) << c.instance();
            EXPECT_EQ(a.members[3].kind, Arg::Kind::Pointer);
            EXPECT_EQ(a.members[4].kind, Arg::Kind::Float);
            if (!fold) {
              EXPECT_TRUE(a.members[3].place.name.empty()) << c.instance();
            }
          }
    EXPECT_GT(copies, 0);
  }
}

// gemv_prequant: the decode step's norms and attention folds write the quantized copy the projections after them read
// (lk_add_rmsnorm<.., true>, lk_attention_fold<true>), so no quantize launch follows either; the FFN's product keeps
// its quantize launch. Each layer: its two norms and its fold.
TEST(Lowering, TheDecodeNormAndFoldWriteTheQuantizedCopy) {
  const Schedule p = schedule_of({{"numerics", "int8"}, {"gemv_prequant", true}, {"attn_splits", 4}});
  const Form& step = form_of(p, 1);
  int norms = 0, folds = 0, quantizes = 0;
  for (size_t i = 0; i < step.launches.size(); ++i) {
    const Launch& l = step.launches[i];
    const std::optional<std::string>* xq = nullptr;
    if (const auto* n = std::get_if<AddNorm>(&l.op)) xq = &n->xq, norms += n->xq.has_value();
    if (const auto* f = std::get_if<Fold>(&l.op)) xq = &f->xq, folds += f->xq.has_value();
    if (xq && *xq) {
      EXPECT_NE(std::find(l.writes.begin(), l.writes.end(), **xq), l.writes.end());
      const std::vector<KernelCall> calls = lower(p, step, l);
      ASSERT_EQ(calls.size(), 1u);
      // (the norm's QUANT is its second argument, then its register form's pieces a thread; the fold's its last)
      const bool norm = std::holds_alternative<AddNorm>(l.op);
      EXPECT_EQ(calls[0].targs.at(norm ? 1 : calls[0].targs.size() - 1), "true") << calls[0].instance();
      if (norm) {
        EXPECT_EQ(calls[0].targs.at(2), std::to_string(lk_norm_pieces(int(p.model.d_model), int(calls[0].block.v[0]))))
            << calls[0].instance();
      }
      EXPECT_EQ(calls[0].params.back().kind, Arg::Kind::Pointer);
      ASSERT_LT(i + 1, step.launches.size());  // (the projection after it reads the copy)
      const std::vector<std::string>& next = step.launches[i + 1].reads;
      EXPECT_NE(std::find(next.begin(), next.end(), **xq), next.end());
    }
    if (std::holds_alternative<QuantizeI8>(l.op)) {
      ++quantizes;
      ASSERT_GT(i, 0u);
      const Op& before = step.launches[i - 1].op;
      EXPECT_FALSE(std::holds_alternative<AddNorm>(before) || std::holds_alternative<Fold>(before)) << l.output;
    }
  }
  const int layers = int(tiny().model.layers);
  EXPECT_GE(norms, 2 * layers);
  EXPECT_EQ(folds, layers);
  EXPECT_EQ(quantizes, layers);  // (the down projection's input)
  // With one split there is no fold: the attention launch writes the copy (its last parameter), no quantize after it.
  for (const int mma : {0, 2}) {
    const Schedule one = schedule_of({{"numerics", "int8"},
                                      {"gemv_prequant", true},
                                      {"attn_splits", 1},
                                      {"attn_mma", mma},
                                      {"kv_cache", mma ? "f16" : "act"}});
    const Form& s1 = form_of(one, 1);
    int attentions = 0, quantized = 0;
    for (size_t i = 0; i < s1.launches.size(); ++i) {
      const Launch& l = s1.launches[i];
      EXPECT_FALSE(std::holds_alternative<Fold>(l.op));
      const auto* a = std::get_if<Attention>(&l.op);
      if (!a) continue;
      ++attentions;
      ASSERT_TRUE(a->xq.has_value()) << l.output;
      const std::vector<KernelCall> calls = lower(one, s1, l);
      ASSERT_EQ(calls.size(), 1u);
      EXPECT_EQ(calls[0].kernel, mma ? "lk_attention_mma" : "lk_attention");
      // (the copy is the last parameter; lk_attention_mma's is followed by its fold's count and rope's lk_rope_args)
      const Arg& copy = calls[0].params[calls[0].params.size() - (mma ? 3 : 1)];
      EXPECT_EQ(copy.kind, Arg::Kind::Pointer);
      EXPECT_NE(copy.place.space, Place::Space::Null);
      ASSERT_LT(i + 1, s1.launches.size());
      const std::vector<std::string>& next = s1.launches[i + 1].reads;
      quantized += std::find(next.begin(), next.end(), *a->xq) != next.end();
      EXPECT_FALSE(std::holds_alternative<QuantizeI8>(s1.launches[i + 1].op));
    }
    EXPECT_EQ(attentions, layers);
    EXPECT_EQ(quantized, layers);
    // (a chunk's attention keeps a null copy)
    for (const Launch& l : form_of(one, 16).launches) {
      if (std::holds_alternative<Attention>(l.op)) {
        EXPECT_EQ(lower(one, form_of(one, 16), l).at(0).params.back().place.space, Place::Space::Null);
      }
    }
  }
  // Without gemv_prequant nothing is folded, and the kernels take a null copy.
  const Schedule plain = schedule_of({{"numerics", "int8"}, {"attn_splits", 4}});
  for (const Launch& l : form_of(plain, 1).launches) {
    const auto* n = std::get_if<AddNorm>(&l.op);
    const auto* f = std::get_if<Fold>(&l.op);
    EXPECT_FALSE((n && n->xq) || (f && f->xq)) << l.output;
  }
}

// The decode step's tensor-core attention with splits folds them itself (folds_in_attention): no Fold launch, its
// output, partials and copy written by the one launch, a count a key/value head carried (attn_count) and passed; a
// chunk's split attention keeps its Fold launch, and one split needs no count.
TEST(Lowering, TheStepsSplitAttentionFoldsItself) {
  const Schedule p = schedule_of({{"numerics", "int8"},
                                  {"gemv_prequant", true},
                                  {"attn_splits", 4},
                                  {"attn_mma", 2},
                                  {"kv_cache", "f16"},
                                  {"fuse_rope_kv", true}});
  ASSERT_TRUE(folds_in_attention(p, 1));
  ASSERT_TRUE(p.carried.count("attn_count"));
  EXPECT_EQ(p.carried.at("attn_count").count, size_t(p.model.kv_heads));
  const Form& step = form_of(p, 1);
  int attentions = 0;
  for (size_t i = 0; i < step.launches.size(); ++i) {
    const Launch& l = step.launches[i];
    EXPECT_FALSE(std::holds_alternative<Fold>(l.op)) << l.output;
    const auto* a = std::get_if<Attention>(&l.op);
    if (!a) continue;
    ++attentions;
    EXPECT_TRUE(a->fold);
    ASSERT_TRUE(a->part && a->xq);
    EXPECT_EQ(l.output, a->out.buf);
    for (const std::string& w : {a->out.buf, a->part->buf, *a->xq})
      EXPECT_NE(std::find(l.writes.begin(), l.writes.end(), w), l.writes.end()) << w;
    const std::vector<KernelCall> calls = lower(p, step, l);
    ASSERT_EQ(calls.size(), 1u);
    const std::vector<Arg>& params = calls[0].params;
    EXPECT_NE(params[4].place.space, Place::Space::Null);  // (the output)
    EXPECT_NE(params[5].place.space, Place::Space::Null);  // (the partials)
    EXPECT_EQ(params[params.size() - 2].place.name, "attn_count");
    ASSERT_LT(i + 1, step.launches.size());
    EXPECT_FALSE(std::holds_alternative<QuantizeI8>(step.launches[i + 1].op));
  }
  EXPECT_EQ(attentions, int(p.model.layers));
  for (const Launch& l : form_of(p, 16).launches)
    if (const auto* a = std::get_if<Attention>(&l.op)) {
      EXPECT_FALSE(a->fold);
    }
  const Schedule one = schedule_of({{"attn_splits", 1}, {"attn_mma", 2}, {"kv_cache", "f16"}});
  EXPECT_FALSE(one.carried.count("attn_count"));
  const Schedule plain = schedule_of({{"attn_splits", 4}});
  EXPECT_FALSE(plain.carried.count("attn_count"));
}

// attn_fold_launch: the same split step attention folded by a launch of its own (lk_attention_fold, a block a query
// head, the int8 copy its to write), the attention's partials its only output, no count carried or passed; a knob of
// long contexts' spaces only, under attn_mma 2 with splits.
TEST(Lowering, TheStepsFoldTakesALaunchOfItsOwnUnderAttnFoldLaunch) {
  const json k = {{"numerics", "int8"}, {"gemv_prequant", true}, {"attn_splits", 4},         {"attn_mma", 2},
                  {"kv_cache", "f16"},  {"fuse_rope_kv", true},  {"attn_fold_launch", true}, {"context", 8192}};
  model::Model long_context = tiny().model;
  long_context.context = 8192;
  const Schedule p = schedule(tiny().file, long_context, knobs::Knobs::from_json(k), knobs::Target{132, 90, 8192});
  EXPECT_FALSE(folds_in_attention(p, 1));
  EXPECT_FALSE(p.carried.count("attn_count"));
  const Form& step = form_of(p, 1);
  int attentions = 0, folds = 0;
  for (size_t i = 0; i < step.launches.size(); ++i) {
    const Launch& l = step.launches[i];
    if (const auto* f = std::get_if<Fold>(&l.op)) {
      ++folds;
      EXPECT_TRUE(f->xq.has_value());
      const std::vector<KernelCall> calls = lower(p, step, l);
      ASSERT_EQ(calls.size(), 1u);
      EXPECT_EQ(calls[0].kernel, "lk_attention_fold");
      EXPECT_EQ(calls[0].targs, std::vector<std::string>{"true"});
      EXPECT_EQ(calls[0].grid.v[0], p.model.heads);
      EXPECT_EQ(calls[0].block.v[0], 128u);  // (a thread a value of the head: 4 splits, one round of loads)
    }
    const auto* a = std::get_if<Attention>(&l.op);
    if (!a) continue;
    ++attentions;
    EXPECT_FALSE(a->fold);
    EXPECT_FALSE(a->xq.has_value());
    EXPECT_EQ(l.output, a->part->buf);
    const std::vector<KernelCall> calls = lower(p, step, l);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].kernel, "lk_attention_mma");
    EXPECT_EQ(calls[0].params[4].place.space, Place::Space::Null);                           // (no output: the fold's)
    EXPECT_EQ(calls[0].params[calls[0].params.size() - 2].place.space, Place::Space::Null);  // (no count)
    ASSERT_TRUE(std::holds_alternative<Fold>(step.launches.at(i + 1).op));
  }
  EXPECT_EQ(attentions, int(p.model.layers));
  EXPECT_EQ(folds, int(p.model.layers));
  // 32 and 64 splits: 2 and 4 groups of a head's threads, each over a share of the splits (lk_fold_groups).
  for (const auto& [splits, threads] : {std::pair{32, 256u}, std::pair{64, 512u}}) {
    json wide = k;
    wide["attn_splits"] = splits;
    const Schedule q = schedule(tiny().file, long_context, knobs::Knobs::from_json(wide), knobs::Target{132, 90, 8192});
    const auto fold = lower(q, form_of(q, 1), launch_of(q, 1, "attention_fold", "l0_a"));
    ASSERT_EQ(fold.size(), 1u);
    EXPECT_EQ(fold[0].block.v[0], threads) << splits;
  }
  // Its domain: long contexts only; its rule: attn_mma 2 and splits.
  model::Model m = tiny().model;
  EXPECT_EQ(domain_size(knobs::space(m, {132, 90}), "attn_fold_launch"), 1u);
  m.context = 8192;
  const knobs::Space s = knobs::space(m, {132, 90, 8192});
  EXPECT_EQ(domain_size(s, "attn_fold_launch"), 2u);
  knobs::Knobs with = knobs::Knobs::from_json(k);
  EXPECT_EQ(s.why_invalid(with), "");
  with.attn_splits = 1;
  EXPECT_NE(s.why_invalid(with).find("attn_fold_launch needs attn_mma 2 and attn_splits above 1"), std::string::npos);
  with.attn_splits = 4;
  with.attn_mma = 1;
  EXPECT_NE(s.why_invalid(with).find("attn_fold_launch needs"), std::string::npos);
}

// A chunk's attention splits its positions only while its blocks fill fewer than the GPU's multiprocessors (132 here),
// at most 16 ways; the decode step takes attn_splits as it is. tiny-qwen3: 2 key/value heads of 2 query heads each.
TEST(Lowering, AChunksAttentionSplitsOnlyToFillTheGpu) {
  auto splits = [](const Schedule& p, int rows) {
    for (const Launch& l : form_of(p, rows).launches)
      if (const auto* a = std::get_if<Attention>(&l.op)) return a->splits;
    return 0;
  };
  // Tensor cores: a block 64 query rows (rows x 2) of a key/value head: 2 blocks at 16 rows, 32 at 512.
  const Schedule mma = schedule_of({{"kv_cache", "f16"}, {"attn_mma", 1}, {"attn_splits", 16}, {"max_chunk", 512}});
  EXPECT_EQ(splits(mma, 16), 16);
  EXPECT_EQ(splits(mma, 512), 4);
  EXPECT_EQ(splits(mma, 1), 16);
  // lk_attention: a block a row and key/value head: 32 blocks at 16 rows, 1,024 at 512.
  const Schedule plain = schedule_of({{"attn_splits", 16}, {"max_chunk", 512}});
  EXPECT_EQ(splits(plain, 16), 4);
  EXPECT_EQ(splits(plain, 512), 1);
  EXPECT_EQ(splits(plain, 2), 16);
  // (never more than the knob asks)
  EXPECT_EQ(splits(schedule_of({{"attn_splits", 2}, {"max_chunk", 16}}), 16), 2);
}

// gemv_prequant in a chunk whose projections run as GEMV slabs (a block format without gemm_prequant's GEMMs, or under
// 16 rows): one launch quantizes the chunk's rows row by row, and each slab reads its rows of that copy (an lk_xq of
// the chunk's rows from the slab's first) instead of every warp quantizing the activations again (session 20: the
// 8B's gate/up over a 4-row slab took 645 us so).
TEST(Lowering, AChunksGemvSlabsReadTheRowByRowCopy) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  const json j = {{"numerics", "int8"}, {"gemv_prequant", true}, {"max_chunk", 16}, {"fuse_glu", true}};
  const Schedule p = schedule(file, m, knobs::Knobs::from_json(j), knobs::Target{132, 90});
  for (const int rows : {16, 4}) {
    const Form& f = form_of(p, rows);
    std::map<std::string, int> copies;  // (each copy: its rows)
    int slabs = 0;
    for (const Launch& l : f.launches) {
      if (const auto* q = std::get_if<QuantizeI8>(&l.op)) {
        EXPECT_FALSE(q->fragments || q->half) << l.output;  // (row by row)
        copies[q->xq] = q->rows;
      }
      const Gemv* g = std::get_if<Gemv>(&l.op);
      if (const auto* glu = std::get_if<GemvGlu>(&l.op)) {
        EXPECT_TRUE(glu->xq.has_value()) << l.output;
      }
      if (!g || g->rows != rows) continue;  // (the logits project the last row alone)
      ASSERT_TRUE(g->xq.has_value()) << l.output;
      ASSERT_TRUE(copies.count(*g->xq)) << l.output;  // (quantized before, in this form)
      EXPECT_EQ(copies[*g->xq], rows);
      for (const KernelCall& c : lower(p, f, l)) {
        ASSERT_EQ(c.targs.back(), "lk_xq") << c.instance();
        const Arg& x = c.params.at(1);
        ASSERT_EQ(x.kind, Arg::Kind::Aggregate);
        ASSERT_EQ(x.members.size(), 5u);  // (every field of lk_xq: AnInt8CopyNamesEveryFieldOfItsStruct)
        EXPECT_EQ(x.members[1].i, rows);  // the copy's rows
        EXPECT_EQ(x.members[2].i, 0);     // lk_gemv's slabs along y from row 0 (blockIdx.y adds 8 a slab)
        EXPECT_EQ(c.grid.v[1], unsigned(rows >= 8 ? rows / 8 : 1));
        ++slabs;
      }
    }
    EXPECT_GT(slabs, 0) << rows;
  }
  // lk_gemv_parts takes its slabs a launch each: the second's copy from row 8.
  const Schedule fused = schedule(
      file, m,
      knobs::Knobs::from_json({{"numerics", "int8"}, {"gemv_prequant", true}, {"max_chunk", 16}, {"fuse_qkv", true}}),
      knobs::Target{132, 90});
  std::vector<int64_t> firsts;
  for (const Launch& l : form_of(fused, 16).launches)
    if (std::holds_alternative<GemvParts>(l.op))
      for (const KernelCall& c : lower(fused, form_of(fused, 16), l)) firsts.push_back(c.params.at(1).members.at(2).i);
  ASSERT_GE(firsts.size(), 2u);
  EXPECT_EQ(firsts[0], 0);
  EXPECT_EQ(firsts[1], 8);
}

// gemv_rows_q6_k: a Q4_K_M checkpoint's decode GEMVs over its Q6_K matrices take that many rows a warp, the others
// gemv_rows_per_warp's; 0 leaves Q6_K's at gemv_rows_per_warp. A checkpoint without Q6_K has the knob at 0 alone.
// fuse_qkv over a Q4_K_M checkpoint: a layer whose q, k and v share a format projects them in one launch; one whose v
// is Q6_K (llama.cpp's mix) projects q and k in one (lk_gemv_parts over two parts) and v in its own, not three.
TEST(Lowering, QAndKFuseBesideAVOfAnotherFormat) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  const Schedule p =
      schedule(file, m, knobs::Knobs::from_json({{"numerics", "int8"}, {"gemv_prequant", true}, {"fuse_qkv", true}}),
               knobs::Target{132, 90});
  const Form& step = form_of(p, 1);
  int three = 0, two = 0, alone = 0;
  for (size_t i = 0; i < step.launches.size(); ++i) {
    const auto* g = std::get_if<GemvParts>(&step.launches[i].op);
    if (!g) continue;
    const Matrix& wq = p.matrix(g->parts[0].w);
    if (g->parts.size() == 3) {
      ++three;
      continue;
    }
    ASSERT_EQ(g->parts.size(), 2u);
    ++two;
    EXPECT_EQ(p.matrix(g->parts[1].w).type, wq.type);
    const std::vector<KernelCall> calls = lower(p, step, step.launches[i]);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].kernel, "lk_gemv_parts");
    const size_t rows = wq.rows + p.matrix(g->parts[1].w).rows;
    EXPECT_EQ(calls[0].grid.v[0], (rows + 7) / 8);  // (8 warps of a row each)
    // v next, alone, in its own format, reading the same copy
    ASSERT_LT(i + 1, step.launches.size());
    const auto* v = std::get_if<Gemv>(&step.launches[i + 1].op);
    ASSERT_NE(v, nullptr);
    EXPECT_NE(p.matrix(v->w).type, wq.type);
    EXPECT_EQ(v->xq, g->xq);
    ++alone;
  }
  EXPECT_GT(three, 0);
  EXPECT_GT(two, 0);
  EXPECT_EQ(two, alone);
  EXPECT_EQ(three + two, int(m.layers));
}

TEST(Lowering, Q6KMatricesTakeTheirOwnRowsAWarp) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  auto of = [&](const json& k) { return schedule(file, m, knobs::Knobs::from_json(k), knobs::Target{132, 90}); };
  auto decode_gemvs = [](const Schedule& p) {
    std::map<std::string, std::string> by_format;  // the instances, by the matrix format they name
    for (const Launch& l : form_of(p, 1).launches)
      for (const KernelCall& c : lower(p, form_of(p, 1), l))
        if (c.kernel == "lk_gemv") by_format[c.targs.at(0)] += c.instance() + " ";
    return by_format;
  };
  const json base = {{"numerics", "int8"}, {"gemv_prequant", true}, {"gemv_rows_per_warp", 1}};
  json q6 = base;
  q6["gemv_rows_q6_k"] = 2;
  const auto split = decode_gemvs(of(q6));
  ASSERT_TRUE(split.count("lk_blk<LK_Q6_K>") && split.count("lk_blk<LK_Q4_K>"));
  EXPECT_NE(split.at("lk_blk<LK_Q6_K>").find("lk_gemv<lk_blk<LK_Q6_K>, 2, 1, lk_xq>"), std::string::npos);
  EXPECT_EQ(split.at("lk_blk<LK_Q6_K>").find(", 1, 1, lk_xq>"), std::string::npos);
  EXPECT_EQ(split.at("lk_blk<LK_Q4_K>").find(", 2, 1, lk_xq>"), std::string::npos);
  const auto same = decode_gemvs(of(base));
  EXPECT_EQ(same.at("lk_blk<LK_Q6_K>").find(", 2, 1, lk_xq>"), std::string::npos);
  // The knob's domain: 0, 1, 2, 4 where the checkpoint has Q6_K; 0 alone where it has none.
  const knobs::Space with = knobs::space(m, {132, 90});
  const knobs::Space without = knobs::space(tiny().model, {132, 90});  // (q8_0)
  EXPECT_EQ(domain_size(with, "gemv_rows_q6_k"), 4u);
  EXPECT_EQ(domain_size(without, "gemv_rows_q6_k"), 1u);
  // fuse_qkv holds each part's rows to its own format's rows a warp.
  json fused = q6;
  fused["fuse_qkv"] = true;
  EXPECT_EQ(with.why_invalid(knobs::Knobs::from_json(fused)), "");
  fused["gemv_rows_q6_k"] = 4;
  const int64_t v_rows = int64_t(m.kv_heads) * m.value_dim;
  EXPECT_EQ(with.why_invalid(knobs::Knobs::from_json(fused)).empty(), v_rows % 4 == 0);
}

// glu_stage: the decode step's fused gate/up GEMV over a block format with the int8 copy stages the copy's row in
// shared memory (its joint rounds: one row a warp; the kernel's STAGE), a word an activation's k codes and k / 32
// scales; not without the knob, in a chunk's slabs, or where the knob's rule refuses it (f32 activations, two rows a
// warp); the knob's domain only where the checkpoint has block-format matrices.
TEST(Lowering, TheFusedGateUpGemvStagesTheInt8CopysRow) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  auto glu_smem = [&](const json& k, int rows) {
    const Schedule p = schedule(file, m, knobs::Knobs::from_json(k), knobs::Target{132, 90});
    std::set<size_t> smem;
    for (const Launch& l : form_of(p, rows).launches)
      for (const KernelCall& c : lower(p, form_of(p, rows), l))
        if (c.kernel == "lk_gemv_glu") {
          smem.insert(c.smem);
          EXPECT_EQ(c.targs.back() == "true", c.smem > 0) << c.instance();
        }
    return smem;
  };
  const size_t k = size_t(m.d_model);
  const json base = {{"numerics", "int8"},      {"gemv_prequant", true}, {"fuse_glu", true},
                     {"gemv_rows_per_warp", 1}, {"max_chunk", 4},        {"glu_stage", true}};
  EXPECT_EQ(glu_smem(base, 1), (std::set<size_t>{k * 9 / 8}));
  json x2 = base;
  x2["numerics"] = "int8x2";
  EXPECT_EQ(glu_smem(x2, 1), (std::set<size_t>{2 * k * 9 / 8}));
  json off = base;
  off["glu_stage"] = false;
  EXPECT_EQ(glu_smem(off, 1), (std::set<size_t>{0}));
  EXPECT_EQ(glu_smem(base, 4), (std::set<size_t>{0}));  // (a chunk of 4 rows: one slab of 4)
  // The knob's rule and domain.
  const knobs::Space s = knobs::space(m, {132, 90});
  EXPECT_EQ(s.why_invalid(knobs::Knobs::from_json(base)), "");
  for (const auto& [name, value] : {std::pair<const char*, json>{"gemv_prequant", false},
                                    {"fuse_glu", false},
                                    {"gemv_rows_per_warp", 2}}) {  // (dequant: gemv_prequant's rule first)
    json bad = base;
    bad[name] = value;
    EXPECT_NE(s.why_invalid(knobs::Knobs::from_json(bad)).find("glu_stage needs"), std::string::npos) << name;
  }
  EXPECT_EQ(domain_size(s, "glu_stage"), 2u);
  EXPECT_EQ(domain_size(knobs::space(tiny().model, {132, 90}), "glu_stage"), 1u);  // (q8_0)
}

// That `knob` (set in `base`, a valid point of `s` under the int8 numerics with the copy) needs the int8 numerics and
// unsplit GEMVs: the dequant numerics and gemv_split 2 each break its rule, in words.
void expect_int8_unsplit(const knobs::Space& s, const json& base, const std::string& knob) {
  EXPECT_EQ(s.why_invalid(knobs::Knobs::from_json(base)), "") << knob;
  json dequant = base;
  dequant["numerics"] = "dequant";
  dequant.erase("gemv_prequant");
  EXPECT_NE(s.why_invalid(knobs::Knobs::from_json(dequant)).find(knob + " needs the int8"), std::string::npos) << knob;
  json split = base;
  split["gemv_split"] = 2;
  EXPECT_NE(s.why_invalid(knobs::Knobs::from_json(split)).find("gemv_split 1"), std::string::npos) << knob;
}

// gemv_short: a plain decode GEMV whose rows are one round of loads (here tiny-llama's k of 256 and 512: 8 and 16
// units) takes 4 times its rows a warp with one unit of each in flight (lk_gemv's A 1), where the launch still gives
// every multiprocessor two blocks (2 here; not at 132, whose 512-row logits would be 16 blocks); the int8 numerics
// and unsplit GEMVs only; the domain only where the checkpoint has such a matrix.
TEST(Lowering, ShortGemvsTakeFourTimesTheRowsOneUnitEach) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  auto logits = [&](const json& k, int sms) {
    const Schedule p = schedule(file, m, knobs::Knobs::from_json(k), knobs::Target{sms, 90});
    const auto calls = lower(p, form_of(p, 1), launch_of(p, 1, "gemv", "logits"));
    EXPECT_EQ(calls.size(), 1u);
    return calls.at(0);
  };
  const json base = {{"numerics", "int8"}, {"gemv_prequant", true}, {"gemv_rows_q6_k", 2}, {"gemv_short", true}};
  const KernelCall few = logits(base, 2);
  EXPECT_EQ(few.instance(), "lk_gemv<lk_blk<LK_Q6_K>, 8, 1, lk_xq, 1>");
  EXPECT_EQ(few.grid.v[0], m.vocab / 64);  // (8 warps of 8 rows)
  json four = base;  // (4 warps a block, 8 rows a warp: 16 blocks of 32 rows, two for each of 8 multiprocessors, not 12)
  four["gemv_warps"] = 4;
  EXPECT_EQ(logits(four, 12).instance(), "lk_gemv<lk_blk<LK_Q6_K>, 2, 1, lk_xq>");
  EXPECT_EQ(logits(four, 8).instance(), "lk_gemv<lk_blk<LK_Q6_K>, 8, 1, lk_xq, 1>");
  json off = base;
  off["gemv_short"] = false;
  EXPECT_EQ(logits(off, 2).instance(), "lk_gemv<lk_blk<LK_Q6_K>, 2, 1, lk_xq>");
  json own = base;  // (each warp quantizing its activations: the input type named before A)
  own["gemv_prequant"] = false;
  EXPECT_EQ(logits(own, 2).instance(), "lk_gemv<lk_blk<LK_Q6_K>, 8, 1, const lk_act*, 1>");
  const knobs::Space few_sms = knobs::space(m, {2, 90});
  expect_int8_unsplit(few_sms, base, "gemv_short");
  EXPECT_EQ(domain_size(few_sms, "gemv_short"), 2u);
  EXPECT_EQ(domain_size(knobs::space(m, {132, 90}), "gemv_short"), 1u);  // (512 rows: fewer than 32 an SM)
  EXPECT_THROW(schedule(file, m, knobs::Knobs::from_json(base), knobs::Target{132, 90}), lt::Error);
}

// gemv_short over rows of two units a lane (tiny-qwen3's Q8_0 down projection: k 768, 48 units of 16 values): A 2
// and twice the rows a warp; of one unit (its q, k 256: 16 units) A 1 and 4 times; past two units a lane the plain
// form. The same units a lane in the same order, so the same sums a row.
TEST(Lowering, ShortGemvsOfTwoUnitsALaneTakeTwiceTheRows) {
  EXPECT_EQ(lk_gemv_short_units(LK_Q8_0, 512), 1);
  EXPECT_EQ(lk_gemv_short_units(LK_Q8_0, 768), 2);
  EXPECT_EQ(lk_gemv_short_units(LK_Q8_0, 1024), 2);
  EXPECT_EQ(lk_gemv_short_units(LK_Q8_0, 1536), 0);
  EXPECT_EQ(lk_gemv_short_units(LK_Q4_K, 1024), 1);
  EXPECT_EQ(lk_gemv_short_units(LK_Q4_K, 2048), 2);
  EXPECT_EQ(lk_gemv_short_units(LK_Q4_K, 4096), 0);
  EXPECT_EQ(lk_gemv_short_units(int(ggml::Type::F16), 256), 0);
  const json k = {{"numerics", "int8"}, {"gemv_prequant", true}, {"gemv_short", true}};
  const Schedule p = schedule(tiny().file, tiny().model, knobs::Knobs::from_json(k), knobs::Target{2, 90});
  const Form& step = form_of(p, 1);
  int downs = 0;
  for (const Launch& l : step.launches) {
    const auto* g = std::get_if<Gemv>(&l.op);
    if (!g || p.matrix(g->w).cols != tiny().model.ffn) continue;
    const auto calls = lower(p, step, l);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].instance(), "lk_gemv<lk_q8, 2, 1, lk_xq, 2>");
    EXPECT_EQ(calls[0].grid.v[0], tiny().model.d_model / 16);  // (8 warps of 2 rows)
    ++downs;
  }
  EXPECT_EQ(downs, int(tiny().model.layers));
  const auto q = lower(p, step, launch_of(p, 1, "gemv", "l0_q"));
  EXPECT_EQ(q.at(0).instance(), "lk_gemv<lk_q8, 4, 1, lk_xq, 1>");
}

// pdl_first: the lane's head defines LK_PDL_FIRST 3 (kernels/prelude.cuh's lk_pdl_entry and lk_pdl_entry_gemv then let
// the next launch start before their wait); it needs pdl, and an sm_80 target has only its false.
TEST(Lowering, PdlFirstIsTheHeadsSwitchUnderPdl) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  const json on = {{"numerics", "int8"}, {"pdl", true}, {"pdl_first", true}};
  EXPECT_NE(lane::image(file, m, knobs::Knobs::from_json(on), {132, 90}).head.find("#define LK_PDL_FIRST 3\n"),
            std::string::npos);
  json off = on;
  off.erase("pdl_first");
  EXPECT_EQ(lane::image(file, m, knobs::Knobs::from_json(off), {132, 90}).head.find("LK_PDL_FIRST"),
            std::string::npos);  // (kernels/prelude.cuh's default, 0)
  const knobs::Space hopper = knobs::space(m, {132, 90});
  EXPECT_EQ(hopper.why_invalid(knobs::Knobs::from_json(on)), "");
  json alone = on;
  alone.erase("pdl");
  EXPECT_NE(hopper.why_invalid(knobs::Knobs::from_json(alone)).find("pdl_first needs pdl"), std::string::npos);
  EXPECT_EQ(domain_size(knobs::space(m, {108, 80}), "pdl_first"), 1u);
  EXPECT_EQ(domain_size(hopper, "pdl_first"), 2u);
}

// fuse_qkv_mixed: a layer whose v is in another format than its q and k (the Q4_K_M mix keeps some in Q6_K) projects
// all three in one launch, lk_gemv_parts_mixed: q's and k's rows a warp of their format's, then v's one a warp
// (whatever gemv_rows_q6_k says: the launch's registers are its widest path's); without it q and k are fused and v has
// a launch of its own. The knob needs fuse_qkv; its domain holds only where the checkpoint has such a layer.
TEST(Lowering, AMixedFormatVJoinsTheFusedProjection) {
  const gguf::File& file = q4km().file;
  const model::Model& m = q4km().model;
  int layer = -1;
  for (size_t l = 0; l < m.layer.size() && layer < 0; ++l)
    if (m.layer[l].wv->type == ggml::Type::Q6_K && m.layer[l].wq->type == ggml::Type::Q4_K) layer = int(l);
  ASSERT_GE(layer, 0);
  const std::string q = "l" + std::to_string(layer) + "_q";
  const json on = {{"numerics", "int8"}, {"gemv_prequant", true}, {"gemv_rows_q6_k", 2}, {"fuse_qkv", true},
                   {"fuse_qkv_mixed", true}};
  const Schedule p = schedule(file, m, knobs::Knobs::from_json(on), {132, 90});
  const auto calls = lower(p, form_of(p, 1), launch_of(p, 1, "gemv_qkv", q));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].instance(), "lk_gemv_parts_mixed<lk_blk<LK_Q4_K>, lk_blk<LK_Q6_K>, 1, 1, 1, lk_xq>");
  const size_t qk = size_t(m.heads + m.kv_heads) * m.head_dim, v = size_t(m.kv_heads) * m.value_dim;
  EXPECT_EQ(calls[0].grid.v[0], (qk + v + 7) / 8);  // (8 warps a block)
  json off = on;
  off.erase("fuse_qkv_mixed");
  const Schedule apart = schedule(file, m, knobs::Knobs::from_json(off), {132, 90});
  EXPECT_NO_THROW(launch_of(apart, 1, "gemv_qk", q));
  const knobs::Space s = knobs::space(m, {132, 90});
  json alone = on;
  alone.erase("fuse_qkv");
  EXPECT_NE(s.why_invalid(knobs::Knobs::from_json(alone)).find("fuse_qkv_mixed needs fuse_qkv"), std::string::npos);
  EXPECT_EQ(domain_size(s, "fuse_qkv_mixed"), 2u);
  EXPECT_EQ(domain_size(knobs::space(tiny().model, {132, 90}), "fuse_qkv_mixed"), 1u);  // (one format throughout)
}

TEST(Lowering, AttentionTakesTheSharedMemoryItsHeadsNeed) {
  for (const char* numerics : {"dequant", "precise"}) {
    const Schedule p = schedule_of({{"numerics", numerics}, {"attn_splits", 4}});
    const auto calls = lower(p, form_of(p, 1), launch_of(p, 1, "attention", "l0_part"));
    ASSERT_EQ(calls.size(), 1u);
    const int heads = int(tiny().model.group()), vper = int((tiny().model.value_dim + 31) / 32);
    EXPECT_EQ(calls[0].smem, attention_smem(p.act_bytes(), heads, vper));
    EXPECT_EQ(calls[0].grid.v[1], 4u);
    EXPECT_EQ(calls[0].grid.dims, 3);
  }
}

// attn_mma 1 takes a chunk's attention to the tensor cores (a block per key/value head, 64 query rows of the chunk's
// rows times the group's heads, and split) and leaves the decode step's to lk_attention; 2 takes the step's too, in
// the shape whose warps share 16 query rows. The knob's domain and constraint.
TEST(Lowering, AttentionOnTheTensorCores) {
  const model::Model& m = tiny().model;
  const Schedule p = schedule_of({{"kv_cache", "f16"}, {"attn_mma", 1}, {"attn_splits", 2}, {"max_chunk", 64}});
  const auto chunk = lower(p, form_of(p, 64), launch_of(p, 64, "attention", "l0_part"));
  ASSERT_EQ(chunk.size(), 1u);
  EXPECT_EQ(chunk[0].kernel, "lk_attention_mma");
  EXPECT_EQ(chunk[0].targs,
            (std::vector<std::string>{std::to_string(m.head_dim), std::to_string(m.value_dim), "false"}));
  EXPECT_EQ(chunk[0].grid.v[0], m.kv_heads);
  EXPECT_EQ(chunk[0].grid.v[1], (64 * m.group() + 63) / 64);
  EXPECT_EQ(chunk[0].grid.v[2], 2u);
  EXPECT_EQ(chunk[0].smem, size_t(lk_attention_mma_smem(int(m.head_dim), int(m.value_dim), false)));
  const auto decode = lower(p, form_of(p, 1), launch_of(p, 1, "attention", "l0_part"));
  ASSERT_EQ(decode.size(), 1u);
  EXPECT_EQ(decode[0].kernel, "lk_attention");
  const Schedule p2 = schedule_of({{"kv_cache", "bf16"}, {"attn_mma", 2}, {"attn_splits", 2}, {"max_chunk", 64}});
  // (the decode step's folds its own splits: its launch's output is the attention's, l0_a)
  const auto step = lower(p2, form_of(p2, 1), launch_of(p2, 1, "attention", "l0_a"));
  ASSERT_EQ(step.size(), 1u);
  EXPECT_EQ(step[0].kernel, "lk_attention_mma");
  EXPECT_EQ(step[0].targs.back(), "true");
  EXPECT_EQ(step[0].grid.v[1], 1u);
  EXPECT_EQ(step[0].smem, size_t(lk_attention_mma_smem(int(m.head_dim), int(m.value_dim), true)));
  // A chunk's block: 4 warps of 16 query rows; the step's: 8 warps of 8 positions a tile (tiny-qwen3's heads of 128),
  // 4 of 16 where a head is not whole 32-column loads (48, 80, 112), as the kernel takes it (lk_attention_mma_warps).
  EXPECT_EQ(chunk[0].block.v[0], 32u * LK_AM_WARPS);
  EXPECT_EQ(step[0].block.v[0], 32u * LK_AM_STEP_WARPS);
  EXPECT_EQ(lk_attention_mma_warps(true, 64, 64), LK_AM_STEP_WARPS);
  EXPECT_EQ(lk_attention_mma_warps(true, 96, 96), LK_AM_STEP_WARPS);
  EXPECT_EQ(lk_attention_mma_warps(true, 80, 80), LK_AM_WARPS);
  EXPECT_EQ(lk_attention_mma_warps(true, 128, 112), LK_AM_WARPS);
  EXPECT_EQ(lk_attention_mma_warps(false, 128, 128), LK_AM_WARPS);
  // Under fuse_rope_kv the decode step's attention ropes and appends (its rope launch gone, the chunks' kept); ROPE's
  // bits name the model's pairs and norm (tiny-qwen3: NeoX with the per-head norm, 1 + 2 + 4).
  const Schedule p3 = schedule_of(
      {{"kv_cache", "f16"}, {"attn_mma", 2}, {"attn_splits", 2}, {"max_chunk", 64}, {"fuse_rope_kv", true}});
  for (const Form& f : p3.forms) {
    int ropes = 0, fused = 0;
    for (const Launch& l : f.launches) {
      ropes += l.kind == "rope_kv";
      fused += l.kind == "attention_rope";
    }
    EXPECT_EQ(ropes, f.rows == 1 ? 0 : int(m.layers)) << f.rows;
    EXPECT_EQ(fused, f.rows == 1 ? int(m.layers) : 0) << f.rows;
  }
  const auto roped = lower(p3, form_of(p3, 1), launch_of(p3, 1, "attention_rope", "l0_a"));
  ASSERT_EQ(roped.size(), 1u);
  EXPECT_EQ(roped[0].targs, (std::vector<std::string>{std::to_string(m.head_dim), std::to_string(m.value_dim), "true",
                                                      "7"}));
  EXPECT_EQ(roped[0].params.back().kind, Arg::Kind::Aggregate);
  EXPECT_EQ(roped[0].params.back().type, "lk_rope_args");
  EXPECT_EQ(step[0].params.back().type, "lk_rope_args");  // (nulls where the attention does not rope)
  const knobs::Space s = knobs::space(m, {132, 90});
  EXPECT_EQ(s.why_invalid(knobs::Knobs::from_json({{"kv_cache", "f16"}, {"attn_mma", 1}})), "");
  EXPECT_EQ(s.why_invalid(knobs::Knobs::from_json({{"kv_cache", "f16"}, {"attn_mma", 2}, {"max_chunk", 1}})), "");
  EXPECT_NE(s.why_invalid(knobs::Knobs::from_json({{"attn_mma", 1}})), "") << "an f32 cache";
  EXPECT_NE(s.why_invalid(knobs::Knobs::from_json({{"kv_cache", "bf16"}, {"attn_mma", 1}, {"max_chunk", 1}})), "")
      << "no chunks";
  EXPECT_NE(s.why_invalid(knobs::Knobs::from_json({{"kv_cache", "f16"}, {"attn_mma", 2}, {"attn_lanes", true}})), "")
      << "attn_lanes does nothing under attn_mma 2";
  EXPECT_NE(s.why_invalid(knobs::Knobs::from_json({{"kv_cache", "f16"}, {"attn_mma", 3}})), "");
}

// gpt-oss's attention as kernel arguments (tiny-gpt-oss: a sliding window of 128 on layer 0, none on layer 1): every
// attention kernel takes the sinks (parameter 6: the layer's sinks vector where it normalizes the output, null where
// splits leave that to the fold, whose parameter 2 they are then) and the layer's window (parameter 7); the o
// projection takes its bias, plain (parameter 2 of lk_gemv) and with the norm folded in (of lk_gemv_norm). A model
// without them (tiny-qwen3) passes null and 0.
TEST(Lowering, GptOssAttentionTakesItsSinksWindowAndOutputBias) {
  test::TempDir dir;
  synth::write(synth::Options{.preset = "tiny-gpt-oss", .seed = 5}, dir / "gpt-oss.gguf");
  const gguf::File file = gguf::File::open(dir / "gpt-oss.gguf");
  const model::Model m = model::recognize(file);
  ASSERT_TRUE(m.layer[0].sliding && !m.layer[1].sliding);
  auto of = [&](const json& k) { return schedule(file, m, knobs::Knobs::from_json(k), knobs::Target{132, 90}); };
  auto vector_arg = [](const Arg& a) {
    EXPECT_EQ(a.kind, Arg::Kind::Pointer);
    return a.place.space == Place::Space::Vector ? a.place.name : std::string("null");
  };
  struct Path {
    json knobs;
    int rows;
    std::string kernel;
  };
  const Path paths[] = {
      {{{"attn_splits", 1}}, 1, "lk_attention"},
      {{{"attn_splits", 1}, {"attn_lanes", true}}, 1, "lk_attention_lanes"},
      {{{"attn_splits", 1}, {"kv_cache", "f16"}, {"attn_mma", 2}, {"max_chunk", 64}}, 64, "lk_attention_mma"},
      {{{"attn_splits", 1}, {"kv_cache", "f16"}, {"attn_mma", 2}}, 1, "lk_attention_mma"},
  };
  for (const Path& path : paths)
    for (int l : {0, 1}) {
      const Schedule p = of(path.knobs);
      const std::string t = "l" + std::to_string(l) + "_";
      const auto calls = lower(p, form_of(p, path.rows), launch_of(p, path.rows, "attention", t + "a"));
      ASSERT_EQ(calls.size(), 1u);
      EXPECT_EQ(calls[0].kernel, path.kernel) << path.knobs.dump();
      EXPECT_EQ(vector_arg(calls[0].params[6]), "v_blk_" + std::to_string(l) + "_attn_sinks") << path.knobs.dump();
      ASSERT_EQ(calls[0].params[7].kind, Arg::Kind::Int);
      EXPECT_EQ(calls[0].params[7].i, l == 0 ? 128 : 0) << path.knobs.dump();
    }
  const Schedule split = of({{"attn_splits", 4}});
  const auto attention = lower(split, form_of(split, 1), launch_of(split, 1, "attention", "l0_part"));
  EXPECT_EQ(vector_arg(attention[0].params[6]), "null");
  EXPECT_EQ(attention[0].params[7].i, 128);
  const auto fold = lower(split, form_of(split, 1), launch_of(split, 1, "attention_fold", "l0_a"));
  ASSERT_EQ(fold[0].kernel, "lk_attention_fold");
  EXPECT_EQ(vector_arg(fold[0].params[2]), "v_blk_0_attn_sinks");
  const auto o = lower(split, form_of(split, 1), launch_of(split, 1, "gemv", "l1_o"));
  ASSERT_EQ(o[0].kernel, "lk_gemv");
  EXPECT_EQ(vector_arg(o[0].params[2]), "v_blk_1_attn_output_bias");
  const Schedule fused = of({{"fuse_norm", true}});
  const auto norm = lower(fused, form_of(fused, 1), launch_of(fused, 1, "gemv_norm", "l0_h2"));
  ASSERT_EQ(norm[0].kernel, "lk_gemv_norm");
  EXPECT_EQ(vector_arg(norm[0].params[2]), "v_blk_0_attn_output_bias");
  const Schedule plain = schedule_of({{"attn_splits", 4}});
  const auto dense = lower(plain, form_of(plain, 1), launch_of(plain, 1, "attention", "l0_part"));
  EXPECT_EQ(vector_arg(dense[0].params[6]), "null");
  EXPECT_EQ(dense[0].params[7].i, 0);
  const auto dense_fold = lower(plain, form_of(plain, 1), launch_of(plain, 1, "attention_fold", "l0_a"));
  EXPECT_EQ(vector_arg(dense_fold[0].params[2]), "null");
}

// An image's records, read back.
struct Records {
  std::map<std::string, std::string> header;
  std::vector<std::string> lines;
};
Records read(const std::string& text) {
  Records r;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) r.lines.push_back(line);
  return r;
}

// A mixture layer's launches (tiny-moe: 8 experts, 2 a token, 256 wide): the router's GEMV, the route a warp a row, the
// experts' paired gate/up and down, and the combine a block a row (with the next layer's norm under fuse_norm). The
// decode step's expert launches read each slot's expert id on the device; a chunk's group its (row, slot) pairs by
// expert first, and a block column an expert reads that expert's rows once a slab of its pairs.
TEST(Lowering, AMixtureRoutesOnTheDeviceAndReadsOnlyTheSelectedExperts) {
  test::TempDir dir;
  synth::write(synth::Options{.preset = "tiny-moe", .seed = 5}, dir / "moe.gguf");
  const gguf::File file = gguf::File::open(dir / "moe.gguf");
  const model::Model m = model::recognize(file);
  const json k = {{"numerics", "dequant"}, {"max_chunk", 16}, {"gemv_rows_per_warp", 2}, {"fuse_norm", true}};
  const Schedule p = schedule(file, m, knobs::Knobs::from_json(k), knobs::Target{132, 90});
  const Matrix& gate = p.matrix("w_blk_0_ffn_gate_exps");
  EXPECT_EQ(gate.experts, m.experts);
  EXPECT_EQ(gate.rows, size_t(m.experts) * m.expert_ffn);  // every expert's rows, uploaded as the checkpoint has them
  EXPECT_EQ(gate.cols, m.d_model);
  for (int rows : {1, 16}) {
    const Form& f = form_of(p, rows);
    auto one = [&](const std::string& kind, const std::string& output) {
      const auto calls = lower(p, f, launch_of(p, rows, kind, output));
      EXPECT_EQ(calls.size(), 1u) << kind;
      return calls.at(0);
    };
    const KernelCall route = one("moe_route", "l0_experts");
    EXPECT_EQ(route.instance(), "lk_moe_route<true, true>");  // qwen3moe: softmax first, the weights renormalized
    EXPECT_EQ(route.grid.v[0], unsigned(rows));
    EXPECT_EQ(route.smem, m.experts * 4);
    const KernelCall glu = one("moe_glu", "l0_expert_s");
    const KernelCall down = one("moe_down", "l0_expert_dn");
    if (rows == 1) {  // a block column a slot
      EXPECT_EQ(glu.instance(), "lk_moe_glu<lk_q8, lk_q8, 2>");
      EXPECT_EQ(glu.grid.v, (std::array<unsigned, 3>{m.expert_ffn / 16, m.experts_used, 1}));
      EXPECT_EQ(down.instance(), "lk_moe_down<lk_q8, 2>");
      EXPECT_EQ(down.grid.v, (std::array<unsigned, 3>{m.d_model / 16, m.experts_used, 1}));
      EXPECT_EQ(down.params[5].i, int64_t(m.d_model));  // an expert's rows: its offset into the tensor is on the device
    } else {  // the chunk's pairs grouped by expert first, then a block column an expert
      const auto group = lower(p, f, launch_of(p, rows, "moe_group", "l0_expert_x"));
      ASSERT_EQ(group.size(), 2u);
      EXPECT_EQ(group[0].instance(), "lk_moe_group");
      EXPECT_EQ(group[0].grid.v[0], 1u);
      EXPECT_EQ(group[0].block.v[0], 1024u);
      // a count for each of the block's 32 warps and each expert, then the experts' counts and their total
      EXPECT_EQ(group[0].smem, (33 * size_t(m.experts) + 1) * 4);
      EXPECT_EQ(group[1].instance(), "lk_moe_gather");
      EXPECT_EQ(group[1].grid.v[0], unsigned(rows) * m.experts_used);
      EXPECT_EQ(glu.instance(), "lk_moe_glu_grouped<lk_q8, lk_q8, 2>");
      EXPECT_EQ(glu.grid.v, (std::array<unsigned, 3>{m.expert_ffn / 16, m.experts, 1}));
      EXPECT_EQ(down.instance(), "lk_moe_down_grouped<lk_q8, 2>");
      EXPECT_EQ(down.grid.v, (std::array<unsigned, 3>{m.d_model / 16, m.experts, 1}));
    }
    // The first layer's combine norms the second layer's input; the last layer's is the output norm's add.
    EXPECT_EQ(one("moe_combine_norm", "l1_h").instance(), "lk_moe_combine<true>");
    EXPECT_EQ(one("moe_combine", "l1_dn").instance(), "lk_moe_combine<false>");
  }
  // Under gemm_half a chunk's experts run on the tensor cores (lk_moe_gemm_h) over f16 copies of their grouped pairs'
  // rows (lk_half_rows of rows x used pairs), gate and up paired; the decode step keeps its GEMVs.
  const Schedule h =
      schedule(file, m, knobs::Knobs::from_json({{"numerics", "dequant"}, {"max_chunk", 16}, {"gemm_half", true}}),
               knobs::Target{132, 90});
  const Form& f = form_of(h, 16);
  const Launch& glu = launch_of(h, 16, "moe_glu", "l0_expert_s");
  const Launch& down = launch_of(h, 16, "moe_down", "l0_expert_dn");
  ASSERT_TRUE(std::get<MoeGlu>(glu.op).xq.has_value());
  ASSERT_TRUE(std::get<MoeDown>(down.op).xq.has_value());
  const size_t pairs = 16 * m.experts_used;
  const auto copy = lower(h, f, launch_of(h, 16, "half", *std::get<MoeGlu>(glu.op).xq));
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0].params[2].i, int64_t(pairs * m.d_model));  // the gathered rows, each pair's
  const auto g = lower(h, f, glu), d = lower(h, f, down);
  ASSERT_EQ(g.size(), 1u);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(g[0].instance(), "lk_moe_gemm_h<lk_q8, true, 64, 128>");
  EXPECT_EQ(g[0].grid.v,
            (std::array<unsigned, 3>{unsigned((m.expert_ffn + 63) / 64), unsigned((pairs + 63) / 64 + m.experts), 1}));
  EXPECT_EQ(g[0].smem, size_t(lk_gemm_h_smem(128, 64)));
  EXPECT_EQ(d[0].instance(), "lk_moe_gemm_h<lk_q8, false, 64, 128>");
  EXPECT_EQ(d[0].grid.v,
            (std::array<unsigned, 3>{unsigned((m.d_model + 127) / 128), unsigned((pairs + 63) / 64 + m.experts), 1}));
  EXPECT_EQ(d[0].smem, size_t(lk_gemm_h_smem(128, 64)));
  // A chunk whose experts see 64 pairs each or more: tiles of 128 pairs.
  {
    const Schedule big =
        schedule(file, m, knobs::Knobs::from_json({{"numerics", "dequant"}, {"max_chunk", 512}, {"gemm_half", true}}),
                 knobs::Target{132, 90});
    const size_t big_pairs = 512 * m.experts_used;
    ASSERT_GE(big_pairs, 64 * m.experts);
    const auto bg = lower(big, form_of(big, 512), launch_of(big, 512, "moe_glu", "l0_expert_s"));
    ASSERT_EQ(bg.size(), 1u);
    EXPECT_EQ(bg[0].instance(), "lk_moe_gemm_h<lk_q8, true, 128, 128>");
    EXPECT_EQ(bg[0].grid.v[1], unsigned((big_pairs + 127) / 128 + m.experts));
    EXPECT_EQ(bg[0].smem, size_t(lk_gemm_h_smem(128, 128)));
    // moe_tile sets the tile whatever the pairs: 64 at 512 rows, 128 at 16.
    const Schedule small = schedule(
        file, m,
        knobs::Knobs::from_json({{"numerics", "dequant"}, {"max_chunk", 512}, {"gemm_half", true}, {"moe_tile", 64}}),
        knobs::Target{132, 90});
    const auto sg = lower(small, form_of(small, 512), launch_of(small, 512, "moe_down", "l0_expert_dn"));
    EXPECT_EQ(sg.at(0).instance(), "lk_moe_gemm_h<lk_q8, false, 64, 128>");
    EXPECT_EQ(sg.at(0).grid.v[1], unsigned((big_pairs + 63) / 64 + m.experts));
    const Schedule wide = schedule(
        file, m,
        knobs::Knobs::from_json({{"numerics", "dequant"}, {"max_chunk", 16}, {"gemm_half", true}, {"moe_tile", 128}}),
        knobs::Target{132, 90});
    EXPECT_EQ(lower(wide, form_of(wide, 16), launch_of(wide, 16, "moe_glu", "l0_expert_s")).at(0).instance(),
              "lk_moe_gemm_h<lk_q8, true, 128, 128>");
  }
  EXPECT_EQ(lower(h, form_of(h, 1), launch_of(h, 1, "moe_glu", "l0_expert_s"))[0].kernel, "lk_moe_glu");

  // Under int8 and gemv_prequant the decode step's experts read int8 copies: gate and up the one the attention's
  // output norm writes before the router (no launch of its own), down its pairs' rows' (a quantize launch, row by row).
  const Schedule q = schedule(file, m, knobs::Knobs::from_json({{"numerics", "int8"}, {"gemv_prequant", true}}),
                              knobs::Target{132, 90});
  const Form& step = form_of(q, 1);
  const auto qg = lower(q, step, launch_of(q, 1, "moe_glu", "l0_expert_s"));
  const auto qd = lower(q, step, launch_of(q, 1, "moe_down", "l0_expert_dn"));
  const std::string glu_copy = *std::get<MoeGlu>(launch_of(q, 1, "moe_glu", "l0_expert_s").op).xq;
  const std::string down_copy = *std::get<MoeDown>(launch_of(q, 1, "moe_down", "l0_expert_dn").op).xq;
  EXPECT_EQ(qg.at(0).instance(), "lk_moe_glu<lk_q8, lk_q8, 1, lk_xq>");
  EXPECT_EQ(qd.at(0).instance(), "lk_moe_down<lk_q8, 1, lk_xq>");
  EXPECT_EQ(qd.at(0).params[1].members.at(1).i, int64_t(m.experts_used));  // the copy's rows: each pair's
  const Launch& norm = launch_of(q, 1, "add_norm", "l0_h2");
  EXPECT_EQ(std::get<AddNorm>(norm.op).xq, glu_copy);
  const Launch& quantize = launch_of(q, 1, "quantize", down_copy);
  EXPECT_EQ(std::get<QuantizeI8>(quantize.op).rows, int(m.experts_used));
  EXPECT_FALSE(std::get<QuantizeI8>(quantize.op).fragments);
}

TEST(LaneImage, RecordsMatchThePlanAndItsLowering) {
  const json knobs = {{"numerics", "int8"}, {"max_chunk", 16}, {"fuse_qkv", true}, {"side_streams", true}};
  const Schedule p = schedule_of(knobs);
  const Image img = image(tiny().file, tiny().model, knobs::Knobs::from_json(knobs), knobs::Target{132, 90});
  std::vector<Module> modules;
  for (size_t i = 0; i < img.kernels.size(); ++i) modules.push_back({"/cache/m" + std::to_string(i) + ".cubin", "_Zk"});
  const std::string text = image_text(img, modules);
  EXPECT_THROW(image_text(img, {}), Error);
  const Records r = read(text);
  ASSERT_FALSE(r.lines.empty());
  EXPECT_EQ(r.lines[0], "LANE_IMAGE 1");
  const std::string manifest = weights_manifest(tiny().file, tiny().model);
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx",
                static_cast<unsigned long long>(XXH64(manifest.data(), manifest.size(), 0)));
  EXPECT_EQ(r.lines[1], std::string("weights ") + digest);
  // Forms, launches and calls as the schedule and the lowering have them; every kernel named once.
  size_t forms = 0, launches = 0, calls = 0, want_launches = 0, want_calls = 0, side = 0;
  for (const Form& f : p.forms)
    for (const Launch& l : f.launches) {
      ++want_launches;
      want_calls += lower(p, f, l).size();
      side += l.stream > 0;
    }
  std::set<std::string> instances(img.kernels.begin(), img.kernels.end());
  EXPECT_EQ(instances.size(), img.kernels.size());
  for (const std::string& line : r.lines) {
    std::istringstream w(line);
    std::string word;
    w >> word;
    if (word == "form") ++forms;
    if (word == "launch") ++launches;
    if (word == "call") {
      ++calls;
      size_t k = 0;
      w >> k;
      EXPECT_LT(k, img.kernels.size()) << line;
    }
  }
  EXPECT_EQ(forms, p.forms.size());
  EXPECT_EQ(launches, want_launches);
  EXPECT_EQ(calls, want_calls);
  EXPECT_GT(side, 0u);  // side streams on: some launches run beside others
  EXPECT_NE(std::find(r.lines.begin(), r.lines.end(), "side_streams 1"), r.lines.end());
  EXPECT_NE(std::find(r.lines.begin(), r.lines.end(), "act_bytes 4"), r.lines.end());
}

// The parameter records of the image's calls to kernel `instance`, each as its words.
std::vector<std::vector<std::string>> params_of(const Image& img, const std::string& instance) {
  std::vector<Module> modules(img.kernels.size(), Module{"/m.cubin", "_Zk"});
  const size_t k = size_t(std::find(img.kernels.begin(), img.kernels.end(), instance) - img.kernels.begin());
  std::vector<std::vector<std::string>> out;
  std::istringstream in(image_text(img, modules));
  bool mine = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream w(line);
    std::vector<std::string> words;
    for (std::string x; w >> x;) words.push_back(x);
    if (words.empty()) continue;
    if (words[0] == "call") mine = std::stoul(words[1]) == k;
    if (words[0] == "param" && mine) out.push_back(words);
  }
  return out;
}

TEST(LaneImage, ParametersAreLaidOutAsTheKernelsTakeThem) {
  const json knobs = {{"numerics", "dequant"}, {"fuse_qkv", true}, {"fuse_rope_kv", true}, {"fuse_rope", true}};
  const Image img = image(tiny().file, tiny().model, knobs::Knobs::from_json(knobs), knobs::Target{132, 90});
  // lk_gemv_parts_rope(lk_parts<lk_q8> ps, const float* x, int k, lk_rope_args rope) in the decode step.
  std::string instance;
  for (const std::string& k : img.kernels)
    if (k.rfind("lk_gemv_parts_rope<", 0) == 0) instance = k;
  ASSERT_FALSE(instance.empty());
  const auto params = params_of(img, instance);
  ASSERT_GE(params.size(), 4u);
  // lk_parts<lk_q8>: m[3] (an int8 rows and a scales pointer each) at 0..40, bias[3] at 48..64, y[3] at 72..88,
  // n[3] at 96..104, padded to 112.
  const auto& parts = params[0];
  EXPECT_EQ(parts[1], "112");
  EXPECT_EQ(parts[2], "8");
  EXPECT_EQ(parts[3], "15");
  std::vector<std::string> kinds_at;
  for (size_t i = 4; i < parts.size();) {
    kinds_at.push_back(parts[i] + "@" + parts[i + 1]);
    i += parts[i] == "p" ? 5 : 3;
  }
  EXPECT_EQ(kinds_at, (std::vector<std::string>{"p@0", "p@8", "p@16", "p@24", "p@32", "p@40", "p@48", "p@56", "p@64",
                                                "p@72", "p@80", "p@88", "i@96", "i@100", "i@104"}));
  EXPECT_EQ(params[1][1], "8");  // x
  EXPECT_EQ(params[2][1], "4");  // k
  // lk_rope_args: 7 pointers, hq hk hd, eps, 3 pointers, vd ctx: 104 bytes.
  const auto& rope = params[3];
  EXPECT_EQ(rope[1], "104");
  kinds_at.clear();
  for (size_t i = 4; i < rope.size();) {
    kinds_at.push_back(rope[i] + "@" + rope[i + 1]);
    i += rope[i] == "p" ? 5 : 3;
  }
  EXPECT_EQ(kinds_at, (std::vector<std::string>{"p@0", "p@8", "p@16", "p@24", "p@32", "p@40", "p@48", "i@56", "i@60",
                                                "i@64", "f@68", "p@72", "p@80", "p@88", "i@96", "i@100"}));
}

// gpt-oss's image (what the resident host runs while tuning) carries the attention's sinks and windows: the decode
// step's lk_attention calls (layer 0's, then layer 1's; 16 parameters each) take the sinks as a weight vector of its
// table (parameter 6, a pointer at its offset 0) and the layer's window (parameter 7: 128, then 0).
TEST(LaneImage, GptOssAttentionCarriesItsSinksAndWindows) {
  test::TempDir dir;
  synth::write(synth::Options{.preset = "tiny-gpt-oss", .seed = 5}, dir / "gpt-oss.gguf");
  const gguf::File file = gguf::File::open(dir / "gpt-oss.gguf");
  const model::Model m = model::recognize(file);
  const json knobs = {{"numerics", "dequant"}, {"attn_splits", 1}, {"max_chunk", 1}};
  const Image img = image(file, m, knobs::Knobs::from_json(knobs), knobs::Target{132, 90});
  std::string instance;
  for (const std::string& k : img.kernels)
    if (k.rfind("lk_attention<", 0) == 0) instance = k;
  ASSERT_FALSE(instance.empty());
  const auto params = params_of(img, instance);
  ASSERT_EQ(params.size(), 2 * 16u);
  for (int l : {0, 1}) {
    const auto& sinks = params[16 * l + 6];
    ASSERT_EQ(sinks.size(), 9u);
    EXPECT_EQ(std::vector<std::string>(sinks.begin() + 4, sinks.begin() + 7),
              (std::vector<std::string>{"p", "0", "v"}));
    EXPECT_EQ(params[16 * l + 7], (std::vector<std::string>{"param", "4", "4", "1", "i", "0", l == 0 ? "128" : "0"}));
  }
  EXPECT_NE(params[6][7], params[16 + 6][7]) << "each layer's own sinks";
}

TEST(LaneImage, ModulesShareTheImagesHeadAndNameTheirInstance) {
  const Image a = image(tiny().file, tiny().model, knobs::Knobs{}, knobs::Target{132, 90});
  knobs::Knobs precise;
  precise.numerics = knobs::Numerics::Precise;
  const Image b = image(tiny().file, tiny().model, precise, knobs::Target{132, 90});
  EXPECT_NE(a.head, b.head);  // float against double activations: other machine code
  const std::string m = module_source(a.head, "lk_gemv<lk_q8, 1, 1>");
  const std::string last = "void* lk_instance = (void*)&lk_gemv<lk_q8, 1, 1>;\n";
  ASSERT_GT(m.size(), last.size());
  EXPECT_EQ(m.substr(m.size() - last.size()), last);
  EXPECT_NE(m.find(a.head), std::string::npos);
  EXPECT_EQ(m.find("lk_drive"), std::string::npos);  // the host side stays out of modules
  EXPECT_EQ(a.head.find("<vector>"), std::string::npos);  // nor the host's C++ headers (nvcc reads them all)
  // Several instances in one module: each taken by address in a host variable of its own, after one library.
  const std::string two = shared_module_source(a.head, {"lk_gemv<lk_q8, 1, 1>", "lk_gemv<lk_q8, 2, 1>"});
  EXPECT_NE(
      two.find("void* lk_instance = (void*)&lk_gemv<lk_q8, 1, 1>;\nvoid* lk_instance1 = (void*)&lk_gemv<lk_q8, 2, "
               "1>;\n"),
      std::string::npos);
  const std::string library = "// The prelude every lane starts with";  // (kernels/prelude.cuh's first line)
  EXPECT_NE(two.find(library), std::string::npos);
  EXPECT_EQ(two.find(library), two.rfind(library));
  EXPECT_THROW(shared_module_source(a.head, {}), Error);
  EXPECT_EQ(module_library("lk_gemv<lk_q8, 1, 1>"), module_library("lk_gemv<lk_q8, 2, 1>"));
  EXPECT_NE(module_library("lk_gemv<lk_q8, 1, 1>"), module_library("lk_gemv<lk_blk<LK_Q4_K>, 1, 1>"));
}

// A module's kernels told apart by their demangled names (as nvcc's cubins name them: real symbols of a batch built
// for qwen3-0.6b's Q4_K_M lane): the instance's arguments, format macros as ggml's type ids, lk_act as the head's
// type, the template's defaults after them; an instance that matches none or several is left to a module of its own.
TEST(LaneImage, AModulesKernelsAreToldApartByTheirInstances) {
  const std::vector<std::pair<std::string, std::string>> kernels = {
      {"_Z7lk_gemvI6lk_blkILi14EELi2ELi1E5lk_xqLi4EEvT_N5lk_inIT2_E4typeEPKfPfii",
       "void lk_gemv<lk_blk<14>, 2, 1, lk_xq, 4>(lk_blk<14>, lk_in<lk_xq>::type, float const*, float*, int, int)"},
      {"_Z7lk_gemvI6lk_blkILi14EELi8ELi1E5lk_xqLi1EEvT_N5lk_inIT2_E4typeEPKfPfii",
       "void lk_gemv<lk_blk<14>, 8, 1, lk_xq, 1>(lk_blk<14>, lk_in<lk_xq>::type, float const*, float*, int, int)"},
      {"_Z7lk_gemvI6lk_blkILi12EELi2ELi1E5lk_xqLi4EEvT_N5lk_inIT2_E4typeEPKfPfii",
       "void lk_gemv<lk_blk<12>, 2, 1, lk_xq, 4>(lk_blk<12>, lk_in<lk_xq>::type, float const*, float*, int, int)"},
      {"_Z7lk_gemvI6lk_blkILi12EELi1ELi1EPKfLi4EEvT_N5lk_inIT2_E4typeES4_Pfii",
       "void lk_gemv<lk_blk<12>, 1, 1, float const*, 4>(lk_blk<12>, lk_in<float const*>::type, float const*, float*, "
       "int, int)"},
      {"_Z14lk_add_rmsnormILb1ELb0ELi1EEvPfPKfS2_S0_ifPi",
       "void lk_add_rmsnorm<true, false, 1>(float*, float const*, float const*, float*, int, float, int*)"},
      {"_Z8lk_embedI6lk_blkILi14EEEvT_PKiPfif",
       "void lk_embed<lk_blk<14> >(lk_blk<14>, int const*, float*, int, float)"},
      {"_Z9lk_swigluILi0EEvPKfS1_Pfi", "void lk_swiglu<0>(float const*, float const*, float*, int)"},
  };
  const Image a = image(tiny().file, tiny().model, knobs::Knobs{}, knobs::Target{132, 90});
  EXPECT_EQ(
      instance_symbols(a.head,
                       {"lk_gemv<lk_blk<LK_Q6_K>, 2, 1, lk_xq>", "lk_gemv<lk_blk<LK_Q6_K>, 8, 1, lk_xq, 1>",
                        "lk_gemv<lk_blk<LK_Q4_K>, 2, 1, lk_xq, 4>", "lk_gemv<lk_blk<LK_Q4_K>, 1, 1, const lk_act*>",
                        "lk_add_rmsnorm<true, false, 1>", "lk_embed<lk_blk<LK_Q6_K>>", "lk_swiglu<0>"},
                       kernels),
      (std::vector<std::string>{kernels[0].first, kernels[1].first, kernels[2].first, kernels[3].first,
                                kernels[4].first, kernels[5].first, kernels[6].first}));
  // None: another format, another row count, a kernel not built, a template's name alone, another template argument,
  // arguments past the kernel's.
  // Several: the first three arguments of two kernels.
  for (const char* alone :
       {"lk_gemv<lk_blk<LK_Q5_K>, 2, 1, lk_xq>", "lk_gemv<lk_blk<LK_Q6_K>, 4, 1, lk_xq>", "lk_argmax", "lk_add_rmsnorm",
        "lk_swiglu", "lk_swiglu<1>", "lk_gemv<lk_blk<LK_Q6_K>, 2, 1, lk_xq, 4, 1>", "lk_gemv<lk_blk<LK_Q6_K>>"})
    EXPECT_EQ(instance_symbols(a.head, {alone}, kernels), std::vector<std::string>{""}) << alone;
  // Under the precise numerics lk_act is double: the float kernel is not the instance's.
  knobs::Knobs precise;
  precise.numerics = knobs::Numerics::Precise;
  const Image b = image(tiny().file, tiny().model, precise, knobs::Target{132, 90});
  EXPECT_EQ(instance_symbols(b.head, {"lk_gemv<lk_blk<LK_Q4_K>, 1, 1, const lk_act*>"}, kernels),
            std::vector<std::string>{""});
}

// The format macros the instances name are ggml's type ids (kernels/shapes.cuh), which instance_symbols reads them as.
TEST(LaneImage, TheFormatMacrosAreGgmlsTypeIds) {
  std::istringstream shapes{std::string(kernels::source("shapes.cuh"))};
  int checked = 0;
  for (std::string line; std::getline(shapes, line);) {
    std::istringstream words(line);
    std::string define, name;
    long value = -1;
    if (!(words >> define >> name >> value) || define != "#define" || name.rfind("LK_", 0) != 0) continue;
    const auto t = ggml::parse_type(name.substr(3));
    if (!t) continue;
    EXPECT_EQ(value, long(*t)) << name;
    EXPECT_EQ(lane::block_macro(*t), name);
    ++checked;
  }
  EXPECT_GE(checked, 12);
}

}  // namespace
}  // namespace lt::lane
