// The lane's knobs: their JSON form, their domains for a checkpoint and a GPU, and the constraints between them.
#include "compiler/knobs.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <type_traits>
#include <variant>

#include "compiler/error.hpp"
#include "kernels/shapes.cuh"

namespace lt::knobs {

namespace {

using nlohmann::json;

const char* const kNumerics[] = {"dequant", "precise", "int8", "int8x2"};
const char* const kKvCaches[] = {"act", "f16", "bf16", "q8_0"};

Numerics parse_numerics(const json& v) {
  if (!v.is_string()) throw Error("knob numerics must be a string: dequant, precise, int8 or int8x2");
  const std::string s = v.get<std::string>();
  for (size_t i = 0; i < std::size(kNumerics); ++i)
    if (s == kNumerics[i]) return static_cast<Numerics>(i);
  throw Error("knob numerics: unknown value \"" + s + "\" (dequant, precise, int8, int8x2)");
}

KvCache parse_kv_cache(const json& v) {
  if (!v.is_string()) throw Error("knob kv_cache must be a string: act, f16, bf16 or q8_0");
  const std::string s = v.get<std::string>();
  for (size_t i = 0; i < std::size(kKvCaches); ++i)
    if (s == kKvCaches[i]) return static_cast<KvCache>(i);
  throw Error("knob kv_cache: unknown value \"" + s + "\" (act, f16, bf16, q8_0)");
}

int parse_int(const json& v, const char* name) {
  if (!v.is_number_integer()) throw Error(std::string("knob ") + name + " must be an integer, not " + v.dump());
  return v.get<int>();
}

bool parse_bool(const json& v, const char* name) {
  if (!v.is_boolean()) throw Error(std::string("knob ") + name + " must be true or false, not " + v.dump());
  return v.get<bool>();
}

}  // namespace

const char* to_string(Numerics n) {
  return kNumerics[static_cast<int>(n)];
}

const char* to_string(KvCache c) {
  return kKvCaches[static_cast<int>(c)];
}

int lane_context(const model::Model& m, const Knobs& k) {
  return k.context > 0 ? k.context : static_cast<int>(std::clamp<uint32_t>(m.context, 1, 4096));
}

// Measured (bench/NOTES.md, session 11): qwen3-0.6b trained, prompts of up to 2,000 tokens, against the precise lane
// under dequant: f16 4.5e-6, bf16 4.1e-5, q8_0 1.0e-4; the CPU plan model's random tiny models: f16 <= 4.7e-4, bf16
// <= 3.7e-3. The bounds keep a margin over both; the 8-bit cache is judged as the int8 numerics are. The cache's and
// gemm_half's roundings are independent errors, so their bounds add in quadrature (as tolerance's do).
double rounding_bound(const Knobs& k) {
  return std::hypot(kv_cache_bound(k.kv_cache), k.gemm_half ? 2e-3 : 0.0);
}

Tolerance tolerance(Numerics n) {
  switch (n) {
    case Numerics::Precise:
      return {1e-9, 1.0, 0};
    // The int8 numerics' bounds (issue #6), with flips allowed where the reference's top two lie within 4 bounds of
    // each other (relative to the row's RMS: each logit's error is about the bound times the RMS).
    case Numerics::Int8:
      return {3e-2, 0.99, 4 * 3e-2};
    case Numerics::Int8x2:
      return {1e-3, 0.99, 4 * 1e-3};
    case Numerics::Dequant:
      break;
  }
  return {1e-3, 0.99, 0};
}

Tolerance tolerance(const Knobs& k) {
  Tolerance t = tolerance(k.numerics);
  // A compact cache rounds every cached key and value, gemm_half a chunk's GEMMs' inputs: their bound joins the
  // numerics', and they may flip near ties. Independent errors add in quadrature (their squared relative L2s sum), so
  // the bounds do: the larger alone refused correct lanes where two sources each stayed within theirs (the CPU plan
  // model's random shapes, session 51-52: int8 over a q8_0 cache at 0.0305-0.033, the int8 mean 0.0191 there against
  // 0.0166 with a 16-bit cache).
  const double rounding = rounding_bound(k);
  if (rounding == 0) return t;
  t.rel_l2 = std::hypot(t.rel_l2, rounding);
  t.tie = std::max(t.tie, 4 * t.rel_l2);
  return t;
}

json to_json(const Tolerance& t) {
  return {{"rel_l2", t.rel_l2},
          {"argmax_agree", t.argmax_agree},
          {"tie", t.tie},
          {"precise_against_cpu", kPreciseAgainstCpu}};
}

double kv_cache_bound(KvCache c) {
  switch (c) {
    case KvCache::Act:
      return 0;
    case KvCache::F16:
      return 1e-3;
    case KvCache::Bf16:
      return 1e-2;
    case KvCache::Q8_0:
      return 3e-2;
  }
  return 0;
}

size_t kv_cache_bytes(KvCache c, size_t elements, size_t act_bytes) {
  switch (c) {
    case KvCache::Act:
      return elements * act_bytes;
    case KvCache::F16:
    case KvCache::Bf16:
      return elements * 2;
    case KvCache::Q8_0:
      return elements + elements / 32 * 2;
  }
  return 0;
}

bool mma_attention_fits(const model::Model& m, const Target& t) {
  const uint32_t widest = t.arch >= 90 ? 256 : 128;
  return m.head_dim % 16 == 0 && m.value_dim % 16 == 0 && m.head_dim <= widest && m.value_dim <= widest;
}

int gemv_rows(const Knobs& k, ggml::Type t) {
  return t == ggml::Type::Q6_K && k.gemv_rows_q6_k != 0 ? k.gemv_rows_q6_k : k.gemv_rows_per_warp;
}

static_assert(LK_Q8_0 == int(ggml::Type::Q8_0), "kernels/shapes.cuh numbers the formats as ggml does");

namespace {

// The knobs, one entry each: name, field, help and domain (the order `enumerate` walks them). Adding a knob is its
// field in Knobs, an entry here, any constraint it obeys, and its use in the schedule or the lowering.
struct KnobDef {
  const char* name;
  std::variant<Numerics Knobs::*, KvCache Knobs::*, bool Knobs::*, int Knobs::*> field;
  const char* help;
  std::vector<json> values;
  // The model's and the target's say in the domain, applied to `values` (attn_heads: its group's divisors; numerics:
  // the int8 numerics only where a matrix is quantized; context: the target's).
  void (*of_model)(const model::Model& m, const Target& t, std::vector<json>& values) = nullptr;

  json get(const Knobs& k) const {
    return std::visit(
        [&](auto f) -> json {
          using F = decltype(f);
          if constexpr (std::is_same_v<F, Numerics Knobs::*> || std::is_same_v<F, KvCache Knobs::*>)
            return to_string(k.*f);
          else
            return k.*f;
        },
        field);
  }
  void set(Knobs& k, const json& v) const {
    std::visit(
        [&](auto f) {
          using F = decltype(f);
          if constexpr (std::is_same_v<F, Numerics Knobs::*>)
            k.*f = parse_numerics(v);
          else if constexpr (std::is_same_v<F, KvCache Knobs::*>)
            k.*f = parse_kv_cache(v);
          else if constexpr (std::is_same_v<F, bool Knobs::*>)
            k.*f = parse_bool(v, name);
          else
            k.*f = parse_int(v, name);
        },
        field);
  }
};

// Whether any matrix of `m` (the embedding, the output, a layer's projections) is one `pick` takes (its TensorInfo).
template <class Pick>
bool any_tensor(const model::Model& m, Pick pick) {
  auto is = [&](const gguf::TensorInfo* t) { return t && pick(*t); };
  if (is(m.token_embd) || is(m.output)) return true;
  for (const model::Layer& L : m.layer)
    for (const gguf::TensorInfo* t : {L.wq, L.wk, L.wv, L.wo, L.w_gate, L.w_up, L.w_down, L.router, L.gate_exps,
                                      L.up_exps, L.down_exps, L.w_gate_shared, L.w_up_shared, L.w_down_shared})
      if (is(t)) return true;
  return false;
}

// Whether any matrix of `m` is of a type `pick` takes.
template <class Pick>
bool any_matrix(const model::Model& m, Pick pick) {
  return any_tensor(m, [&](const gguf::TensorInfo& t) { return pick(t.type); });
}

// Whether any matrix of `m` is in a quantized format (q8_0 or a block format), what the int8 numerics' products read.
bool has_quantized(const model::Model& m) {
  return any_matrix(m, [](ggml::Type t) { return lk_is_quantized(int(t)); });
}

// Whether any matrix of `m` is of type `t`.
bool has_type(const model::Model& m, ggml::Type t) {
  return any_matrix(m, [t](ggml::Type x) { return x == t; });
}

// Whether a decode norm of `m` can fold into the projection before it (norm_fold, norm_fold_groups): d_model whole
// spans, a dense FFN somewhere (a mixture's router reads its FFN norm's output in f32), and no post norms (gemma3's
// projections' outputs are normed before they join the residual).
bool norm_can_fold(const model::Model& m) {
  const bool spans = m.d_model % LK_NORM_SPAN == 0 && m.d_model / LK_NORM_SPAN <= LK_NORM_SPANS_MAX;
  return spans && !m.post_norms &&
         std::any_of(m.layer.begin(), m.layer.end(), [](const model::Layer& L) { return !L.router; });
}

const KnobDef kTable[] = {
    {"numerics",
     &Knobs::numerics,
     "how the lane computes: f32 activations with weights dequantized in registers (dequant), f64 sums (precise), "
     "or integer products on int8 activations quantized per 32-block (int8; int8x2 adds the residual's word): dp4a "
     "in decode (q8_0 and the block formats), tensor cores in chunks of 16 rows and more (q8_0, and the block formats "
     "under gemm_prequant); the int8 numerics "
     "only where the checkpoint has quantized matrices (f16, bf16 and f32 ones are read dequantized)",
     {"dequant", "precise", "int8", "int8x2"},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       if (!has_quantized(m)) values.resize(2);  // (int8 would be dequant again)
     }},
    {"cuda_graphs", &Knobs::cuda_graphs, "capture each form's step once as a CUDA graph", {true, false}},
    {"max_chunk",
     &Knobs::max_chunk,
     "the largest prefill chunk (rows); chunks are the powers of two from 2 up to it, 1 for none",
     {1, 4, 16, 64, 256, 512}},
    {"gemv_rows_per_warp", &Knobs::gemv_rows_per_warp, "output rows one warp of a GEMV computes", {1, 2, 4}},
    {"gemv_rows_q6_k",
     &Knobs::gemv_rows_q6_k,
     "output rows one warp of a GEMV over a Q6_K matrix computes (llama.cpp's Q4_K_M keeps v, some of the down "
     "projections and the logits in Q6_K, whose 6-bit groups are loads of 26 bytes, not 4-bit ones' 20): 0 for "
     "gemv_rows_per_warp's (a Q6_K v in fuse_qkv_mixed's launch takes one); only where the checkpoint has Q6_K "
     "matrices",
     {0, 1, 2, 4},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       if (!has_type(m, ggml::Type::Q6_K)) values.resize(1);
     }},
    {"gemv_warps", &Knobs::gemv_warps, "warps in a GEMV block", {4, 8}},
    {"gemv_short",
     &Knobs::gemv_short,
     "a plain decode GEMV whose rows are at most half a round of loads (one or two 16-byte units a lane: k up to 1024 "
     "or 2048 in a block format, 512 or 1024 in q8_0; a small model's logits) takes 4 or 2 times its rows a warp, the "
     "registers of the units it would leave empty holding those rows' weights in flight; under the int8 numerics, "
     "where the launch still gives every multiprocessor two blocks; only where the checkpoint has such a matrix",
     {false, true},
     [](const model::Model& m, const Target& t, std::vector<json>& values) {
       const bool any = any_tensor(m, [&](const gguf::TensorInfo& w) {
         const int per = w.dims.empty() ? 0 : lk_gemv_short_units(int(w.type), w.dims[0]);
         if (per == 0) return false;
         // (the rows as dims[1..]'s product here: this file links without the GGUF reader, as the fuzzers do)
         const uint64_t rows =
             std::accumulate(w.dims.begin() + 1, w.dims.end(), uint64_t{1}, std::multiplies<>());
         // (the smallest blocks: 4 warps of a row, 2 an SM)
         return rows >= uint64_t(8) * uint64_t(LK_GEMV_AHEAD / per) * t.sms;
       });
       if (!any) values.resize(1);
     }},
    {"glu_stage",
     &Knobs::glu_stage,
     "the decode step's fused gate/up GEMV over a block format (one row a warp, the int8 copy) stages the copy's row "
     "in each block's shared memory, its units read by LDS rather than by loads that wait behind the weights' misses "
     "(llama-3.1-8b Q4_K_M 1.019x, qwen3-0.6b 0.987x); only where the checkpoint has block-format matrices",
     {false, true},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       if (!any_matrix(m, [](ggml::Type t) { return lk_is_block(int(t)); })) values.resize(1);
     }},
    {"gemv_split",
     &Knobs::gemv_split,
     "warps that share each output row of a plain GEMV (split-K over its units)",
     {1, 2, 4}},
    {"attn_splits",
     &Knobs::attn_splits,
     "decode attention: the positions split over this many blocks, folded after (on the tensor cores the step splits "
     "whole tiles, not at all up to 4 of them, and its last block folds; a chunk's attention splits only while its "
     "blocks fill fewer than the multiprocessors, at most 16 ways); 32 and 64 for long contexts, only where the lane "
     "holds more than 4096 positions",
     {1, 2, 4, 8, 16, 32, 64},
     [](const model::Model&, const Target& t, std::vector<json>& values) {
       if (t.context <= 4096) values.resize(5);
     }},
    {"attn_fold_launch",
     &Knobs::attn_fold_launch,
     "the decode step's split attention on the tensor cores (attn_mma 2, attn_splits above 1) folded by a launch of "
     "its own, a block a query head over its splits' partials, in place of the last block of each key/value head "
     "folding its heads' (a fence and a counter a block, then one block's serial fold: ~7 us of the 8B's 45 us a "
     "layer at depth 32k); only where the lane holds more than 4096 positions and the heads fit the tensor cores",
     {false, true},
     [](const model::Model& m, const Target& t, std::vector<json>& values) {
       const bool step_shape = m.kv_heads && m.heads / m.kv_heads <= 16;  // (lk_attention_mma's STEP: 16 rows)
       if (t.context <= 4096 || !mma_attention_fits(m, t) || !step_shape) values.resize(1);
     }},
    {"fuse_qkv",
     &Knobs::fuse_qkv,
     "project q, k and v in one launch over the three matrices (a layer whose three differ in format keeps three)",
     {false, true}},
    {"fuse_qkv_mixed",
     &Knobs::fuse_qkv_mixed,
     "under fuse_qkv, a layer's v in another format than its q and k (llama.cpp's Q4_K_M keeps some in Q6_K) projected "
     "in the same launch (lk_gemv_parts_mixed) instead of a launch of its own; only where the checkpoint has such a "
     "layer",
     {false, true},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       for (const model::Layer& L : m.layer)
         if (L.wq && L.wk && L.wv && L.wq->type == L.wk->type && L.wv->type != L.wq->type) return;
       values.resize(1);
     }},
    {"fuse_glu",
     &Knobs::fuse_glu,
     "project gate and up in one launch that applies the gated activation to its sums (SwiGLU; gemma3's GELU) (a layer "
     "whose two differ in format keeps two)",
     {false, true}},
    {"fuse_rope_kv",
     &Knobs::fuse_rope_kv,
     "append the roped keys and the values to the caches in rope's launch (under attn_mma 2 the decode step's "
     "attention blocks rope and append themselves: rope's launch gone)",
     {false, true}},
    {"pdl",
     &Knobs::pdl,
     "programmatic dependent launch: each launch starts while the one before it drains (sm_90 and later)",
     {false, true}},
    {"pdl_first",
     &Knobs::pdl_first,
     "under pdl, each launch lets the next one start before it waits for the one before it (not after): the next "
     "launch's blocks take the multiprocessors the one before leaves in its tail and ask their first weights there "
     "(the step's arg-max still lets go after its wait, so no launch of a step starts before the step before it has "
     "finished); only on sm_90 and later",
     {false, true},
     [](const model::Model&, const Target& t, std::vector<json>& values) {
       if (t.arch < 90) values.resize(1);
     }},
    {"gemm_rows",
     &Knobs::gemm_rows,
     "output rows a block of the int8 prefill GEMM computes (8 a warp; 16 under gemm_prequant)",
     {64, 32}},
    {"fuse_norm",
     &Knobs::fuse_norm,
     "the add + norm after the o and down projections done by the projection's last block; not where those outputs are "
     "normed before the residual (gemma3's post norms)",
     {false, true},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       if (m.post_norms) values.resize(1);
     }},
    {"norm_fold",
     &Knobs::norm_fold,
     "the decode step's add + norm after the o and down projections folded into them (the int8 numerics' copy): the "
     "norm's scale factors out of the copy's codes, so each 128-value span's last block adds the span to the residual "
     "and writes the codes of x * w with unscaled 32-block scales and the span's sum of squares, and the projections "
     "reading the copy scale their sums by the norm's 1 / rms from the spans' sums: no norm launch; where every reader "
     "of the norm's output reads the copy; only where a norm can fold (d_model whole spans, a dense FFN somewhere)",
     {false, true},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       if (!norm_can_fold(m)) values.resize(1);
     }},
    {"norm_fold_groups",
     &Knobs::norm_fold_groups,
     "norm_fold's projections in blocks of one 32-group of output rows (32 / rows-a-warp warps a block: 1,024 threads "
     "at a row a warp), each block ending its own group after a barrier (the residual added, its copy and sum of "
     "squares: the numbers of the spans' last blocks), where those need a counter and a fence a block and a second "
     "read of the outputs from L2; only where norm_fold can fold",
     {false, true},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       if (!norm_can_fold(m)) values.resize(1);
     }},
    {"glu_groups",
     &Knobs::glu_groups,
     "the decode step's fused gate/up GEMV, where its rows are one or two units a lane of a block format or Q8_0 "
     "(gemv_short's trade: 4 or 2 rows a warp), in blocks of one 32-group of outputs, each writing its group's int8 "
     "copy after a barrier: no quantize launch before the down projection; only where a dense layer's gate and up are "
     "such",
     {false, true},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       const bool any = std::any_of(m.layer.begin(), m.layer.end(), [&](const model::Layer& L) {
         return L.w_gate && L.w_up && L.w_gate->type == L.w_up->type &&
                lk_glu_group_units(int(L.w_gate->type), m.d_model, m.ffn) != 0;
       });
       if (!any) values.resize(1);
     }},
    {"attn_heads",
     &Knobs::attn_heads,
     "query heads a decode attention block computes: its key/value head's whole group (0) or fewer, for more "
     "blocks that each read the head's cache",
     {0},
     // (the divisors of the query heads a key/value head serves)
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       const uint32_t group = m.kv_heads ? m.heads / m.kv_heads : 1;
       for (uint32_t h = 1; h < group; h *= 2)
         if (group % h == 0) values.push_back(int(h));
     }},
    {"fuse_rope",
     &Knobs::fuse_rope,
     "rope, the per-head norm and the cache append done by the fused q/k/v projection's last block (decode)",
     {false, true}},
    {"side_streams",
     &Knobs::side_streams,
     "launches that do not depend on each other run side by side, joined by events",
     {false, true}},
    {"gemm_prequant",
     &Knobs::gemm_prequant,
     "a chunk's activations quantized once into an int8 copy in the tensor cores' order, which its GEMMs read (a "
     "warp 16 output rows and groups of 8 activation rows; the block formats' chunks run on the tensor cores only so)",
     {false, true}},
    {"gemv_prequant",
     &Knobs::gemv_prequant,
     "the GEMVs' activations quantized once into an int8 copy, which they read (one 16-byte load a unit) instead of "
     "every warp quantizing them again: the decode step's, and a chunk's where its projections run as GEMV slabs",
     {false, true}},
    {"gemm_tile",
     &Knobs::gemm_tile,
     "the prefill GEMMs over the quantized copy as block tiles staged in shared memory (cp.async, ldmatrix): 64 "
     "weight rows by this many activation rows (128: the fused gate/up GEMM under int8, the others 64), fewer while "
     "the GPU would hold under a block an SM; 0 for the untiled kernels",
     {0, 32, 64, 128}},
    {"kv_cache",
     &Knobs::kv_cache,
     "the key/value caches' element: the activations' type (act: f32, f64 under precise), f16, bf16, or q8_0 (int8 "
     "with an f16 scale a 32-block; only where key and value heads are multiples of 32 wide): half or about a "
     "quarter of the bytes attention reads a position, at a tolerance the reference judges",
     {"act", "f16", "bf16", "q8_0"},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       if (m.head_dim % 32 != 0 || m.value_dim % 32 != 0) values.pop_back();
     }},
    {"attn_lanes",
     &Knobs::attn_lanes,
     "decode attention with a lane a position: a warp scores 32 positions at once without shuffles, then sums their "
     "values a lane a dimension (instead of a warp a position); for long contexts",
     {false, true}},
    {"attn_mma",
     &Knobs::attn_mma,
     "attention on the tensor cores, flash-style: 1 a chunk's (64 query rows, its rows times the group's heads, a "
     "block), 2 the decode step's too (a row's heads a block of 8 warps, each an eighth of each tile); tiles of 64 "
     "cached positions, an online softmax, the queries and weights rounded to the cache's type; only with a 16-bit "
     "cache (kv_cache f16 or bf16) and key and value heads multiples of 16 and at most 128 wide (its registers), or "
     "256 on sm_90 and later (a step's block then 2 x 4 warps: each a quarter of each tile, each half of the warps "
     "half of the value columns)",
     {0, 1, 2},
     [](const model::Model& m, const Target& t, std::vector<json>& values) {
       if (!mma_attention_fits(m, t)) values.resize(1);
     }},
    {"gemm_half",
     &Knobs::gemm_half,
     "a chunk's GEMMs on the tensor cores in f16, for every weight format: the activations rounded to f16 once (a copy "
     "the GEMMs read), each weight's dequantized value rounded to f16 as it is unpacked into a tile in shared memory, "
     "f32 sums (lk_gemm_h: 64 weight rows by 128 activation rows a block, the fused gate/up 128 by 128, split along k "
     "where the grid is small; a mixture's experts over their grouped pairs, lk_moe_gemm_h); under the dequant and "
     "int8 numerics with chunks of 16 rows or more, in place of their chunk GEMMs (the int8 ones' knobs then at their "
     "defaults)",
     {false, true}},
    {"moe_tile",
     &Knobs::moe_tile,
     "a mixture's grouped expert GEMM under gemm_half (lk_moe_gemm_h): the (row, expert) pairs a block's tile takes, "
     "64 or 128 (128 weight rows by them); 0 chooses by the pairs an expert sees in the chunk on average (128 from 64 "
     "on, else 64); only where the checkpoint has experts",
     {0, 64, 128},
     [](const model::Model& m, const Target&, std::vector<json>& values) {
       if (m.experts == 0) values.resize(1);
     }},
    {"context",
     &Knobs::context,
     "positions the caches hold: the job's (0: the model's context, at most 4096)",
     {},
     [](const model::Model&, const Target& t, std::vector<json>& values) { values = {t.context}; }},
};

}  // namespace

json Knobs::to_json() const {
  json j = json::object();
  for (const KnobDef& d : kTable) j[d.name] = d.get(*this);
  return j;
}

json Knobs::parse(std::string_view text, const std::string& where) {
  constexpr int kMaxDepth = 8;
  try {
    return json::parse(text, [&](int depth, json::parse_event_t, json&) {
      if (depth > kMaxDepth)
        throw Error(where + " nests JSON deeper than " + std::to_string(kMaxDepth) +
                    " levels: knobs are one flat object");
      return true;
    });
  } catch (const json::exception& e) {
    throw Error(where + " is not JSON: " + e.what());
  }
}

namespace {

// Knobs this build no longer has. A stored configuration (a job's results, a release's manifest, `best --knobs`'s
// file) names every knob of its day, so a retired one at the value it took when left alone reads as absent; another
// value is refused with why, as no lane of this build can honour it.
struct Retired {
  const char* name;
  int value;
  const char* why;
};
constexpr Retired kRetired[] = {
    {"gemv_pipe", 0,
     "its pipelined GEMV rounds lost in every lane measured (0.92-0.98x decode on llama-3.1-8b Q4_K_M and Q8_0, "
     "bench/NOTES.md sessions 35-36)"},
};

// Whether `name` is a retired knob at its value when left alone (to be skipped); throws where it names one otherwise.
bool retired_default(const std::string& name, const json& v) {
  for (const Retired& r : kRetired) {
    if (name != r.name) continue;
    if (v == json(r.value)) return true;
    throw Error("knob " + name + " was retired: " + r.why + "; only its old default " + std::to_string(r.value) +
                " is accepted (read as absent), not " + v.dump());
  }
  return false;
}

// The unknown knob `name`'s error, naming the knob it most likely meant: the nearest by edits (a character inserted,
// removed or changed: Levenshtein's distance, a two-row table) where that is at most a third of the name's length.
// (Names past 64 characters get no guess: a request's megabyte of name would cost the table's rows times it.)
Error unknown_knob(const std::string& name) {
  if (name.size() > 64)
    return Error("unknown knob \"" + name.substr(0, 64) + "...\" (" + std::to_string(name.size()) + " characters)");
  auto edits = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1), next(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      next[0] = i;
      for (size_t j = 1; j <= b.size(); ++j)
        next[j] = std::min({row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      std::swap(row, next);
    }
    return row[b.size()];
  };
  const char* nearest = nullptr;
  size_t best = name.size() / 3 + 1;
  for (const KnobDef& d : kTable)
    if (const size_t e = edits(name, d.name); e < best) best = e, nearest = d.name;
  return Error("unknown knob \"" + name + "\"" + (nearest ? std::string(" (did you mean \"") + nearest + "\"?)" : ""));
}

}  // namespace

Knobs Knobs::from_json(const json& j) {
  if (!j.is_object()) throw Error("knobs must be a JSON object, not " + j.dump());
  Knobs k;
  for (auto& [name, v] : j.items()) k.set(name, v);
  return k;
}

void Knobs::set(const std::string& name, const json& v) {
  for (const KnobDef& d : kTable)
    if (name == d.name) return d.set(*this, v);
  if (retired_default(name, v)) return;
  throw unknown_knob(name);
}

std::string Knobs::key() const {
  return to_json().dump();
}

std::vector<int> Knobs::chunks() const {
  std::vector<int> c;
  for (int r = max_chunk; r >= 2; r /= 2) c.push_back(r);
  return c;
}

namespace {

// Each knob's domain, in the table's order (the order `enumerate` walks them).
std::vector<Domain> domains_for(const model::Model& m, const Target& t) {
  std::vector<Domain> out;
  for (const KnobDef& d : kTable) {
    out.push_back({d.name, d.help, d.values});
    if (d.of_model) d.of_model(m, t, out.back().values);
  }
  return out;
}

Knobs knobs_of(const std::vector<Domain>& d, const std::vector<size_t>& at) {
  Knobs k;
  for (size_t i = 0; i < d.size(); ++i) k.set(d[i].name, d[i].values[at[i]]);
  return k;
}

}  // namespace

namespace {

// A constraint between knobs: its rule in words (as `lane-tune knobs` prints it) and its check, true when `k` keeps it;
// else false, with what is wrong in words into `why` when it is not null (the words are built only then).
struct Rule {
  const char* text;
  const char* reads;  // the knobs its check reads, by name, a space between (size() counts by them)
  bool (*holds)(const Space& s, const Knobs& k, std::string* why);
};

template <class Say>
bool broken(std::string* why, Say&& say) {
  if (why) *why = say();
  return false;
}

// Whether a layer of `m` projects a gate and an up matrix from the FFN's input: a dense FFN, or a mixture's shared
// expert (fuse_glu's launches; a mixture's experts always pair theirs).
bool has_gate_and_up(const model::Model& m) {
  return std::any_of(m.layer.begin(), m.layer.end(), [](const model::Layer& L) { return L.w_gate || L.w_gate_shared; });
}

bool int8_numerics(const Knobs& k) {
  return k.numerics == Numerics::Int8 || k.numerics == Numerics::Int8x2;
}

// The constraints between knobs, one entry each, in the order they are checked.
const Rule kRules[] = {
    {"max_chunk is at most the lane's context",
     "max_chunk context",
     [](const Space& s, const Knobs& k, std::string* why) {
       return k.max_chunk <= lane_context(s.model, k) || broken(why, [&] {
                return "max_chunk " + std::to_string(k.max_chunk) + " exceeds the lane's context " +
                       std::to_string(lane_context(s.model, k));
              });
     }},
    {"kv_cache other than act: not the precise numerics (the reference lane keeps f64 caches)",
     "kv_cache numerics",
     [](const Space&, const Knobs& k, std::string* why) {
       return k.kv_cache == KvCache::Act || k.numerics != Numerics::Precise || broken(why, [&] {
                return std::string("kv_cache ") + to_string(k.kv_cache) +
                       " needs numerics other than precise (the reference lane keeps its caches in f64)";
              });
     }},
    {"attn_mma: a 16-bit cache (kv_cache f16 or bf16: the tensor cores' operands); 1 with chunks (max_chunk above "
     "1); 2 with attn_heads 0 and attn_lanes off (the decode kernels it replaces)",
     "attn_mma kv_cache max_chunk attn_heads attn_lanes",
     [](const Space&, const Knobs& k, std::string* why) {
       if (k.attn_mma == 0) return true;
       if (k.kv_cache != KvCache::F16 && k.kv_cache != KvCache::Bf16)
         return broken(
             why, [&] { return std::string("attn_mma needs kv_cache f16 or bf16, not ") + to_string(k.kv_cache); });
       if (k.attn_mma == 1 && k.max_chunk == 1)
         return broken(why, [] { return std::string("attn_mma 1 (chunks) needs chunks: max_chunk above 1"); });
       if (k.attn_mma == 2 && (k.attn_heads != 0 || k.attn_lanes))
         return broken(why, [] {
           return std::string(
               "attn_mma 2 replaces the decode step's attention kernels: attn_heads 0 and attn_lanes off");
         });
       return true;
     }},
    {"attn_fold_launch: the decode step's attention on the tensor cores (attn_mma 2), split (attn_splits above 1)",
     "attn_fold_launch attn_mma attn_splits",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.attn_fold_launch || (k.attn_mma == 2 && k.attn_splits > 1) || broken(why, [&] {
                return "attn_fold_launch needs attn_mma 2 and attn_splits above 1, not attn_mma " +
                       std::to_string(k.attn_mma) + " and attn_splits " + std::to_string(k.attn_splits);
              });
     }},
    {"gemm_rows other than 64: the int8 numerics with chunks of 16 rows or more (else no GEMM runs)",
     "gemm_rows numerics max_chunk",
     [](const Space&, const Knobs& k, std::string* why) {
       return k.gemm_rows == 64 || (int8_numerics(k) && k.max_chunk >= 16) || broken(why, [&] {
                return "gemm_rows " + std::to_string(k.gemm_rows) +
                       " needs the int8 numerics and chunks of 16 rows or more";
              });
     }},
    {"gemm_prequant: the int8 numerics with chunks of 16 rows or more",
     "gemm_prequant numerics max_chunk",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.gemm_prequant || (int8_numerics(k) && k.max_chunk >= 16) || broken(why, [] {
         return std::string("gemm_prequant needs the int8 numerics and chunks of 16 rows or more");
       });
     }},
    {"gemv_prequant: the int8 numerics",
     "gemv_prequant numerics",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.gemv_prequant || int8_numerics(k) ||
              broken(why, [] { return std::string("gemv_prequant needs the int8 numerics"); });
     }},
    {"gemm_tile other than 0: gemm_prequant and gemm_rows 64 (the tiled GEMM has its own shape)",
     "gemm_tile gemm_prequant gemm_rows",
     [](const Space&, const Knobs& k, std::string* why) {
       return k.gemm_tile == 0 || (k.gemm_prequant && k.gemm_rows == 64) || broken(why, [&] {
                return "gemm_tile " + std::to_string(k.gemm_tile) +
                       " needs gemm_prequant and gemm_rows 64 (the tiled GEMM reads the quantized copy and has its own "
                       "shape)";
              });
     }},
    {"gemm_tile 128: fuse_glu and the int8 numerics (only the fused gate/up GEMM of one word takes tiles of 128)",
     "gemm_tile fuse_glu numerics",
     [](const Space&, const Knobs& k, std::string* why) {
       return k.gemm_tile != 128 || (k.fuse_glu && k.numerics == Numerics::Int8) || broken(why, [] {
                return std::string(
                    "gemm_tile 128 needs fuse_glu and the int8 numerics (only the fused gate/up GEMM of one word takes "
                    "tiles of 128 activation rows; the others take at most 64, the same program as gemm_tile 64)");
              });
     }},
    {"max_chunk above 64 under the int8 numerics: gemm_prequant or gemm_half (the staged GEMM holds at most 64 rows)",
     "max_chunk numerics gemm_prequant gemm_half",
     [](const Space&, const Knobs& k, std::string* why) {
       return !int8_numerics(k) || k.max_chunk <= 64 || k.gemm_prequant || k.gemm_half || broken(why, [&] {
         return "max_chunk " + std::to_string(k.max_chunk) +
                " under the int8 numerics needs gemm_prequant or gemm_half (the staged GEMM holds at most 64 rows)";
       });
     }},
    {"gemm_half: the dequant or int8 numerics (not precise), chunks of 16 rows or more, and the int8 GEMMs' knobs at "
     "their defaults (gemm_prequant off, gemm_tile 0, gemm_rows 64: the GEMMs they shape do not run)",
     "gemm_half numerics max_chunk gemm_prequant gemm_tile gemm_rows",
     [](const Space&, const Knobs& k, std::string* why) {
       if (!k.gemm_half) return true;
       if (k.numerics == Numerics::Precise)
         return broken(why, [] { return std::string("gemm_half needs numerics other than precise (f64 sums)"); });
       if (k.max_chunk < 16)
         return broken(why, [] { return std::string("gemm_half needs chunks of 16 rows or more (max_chunk 16+)"); });
       return (!k.gemm_prequant && k.gemm_tile == 0 && k.gemm_rows == 64) || broken(why, [] {
                return std::string(
                    "gemm_half replaces the int8 chunk GEMMs: gemm_prequant off, gemm_tile 0 and gemm_rows 64");
              });
     }},
    {"moe_tile other than 0: gemm_half (the tile is the f16 grouped expert GEMM's)",
     "moe_tile gemm_half",
     [](const Space&, const Knobs& k, std::string* why) {
       return k.moe_tile == 0 || k.gemm_half || broken(why, [&] {
                return "moe_tile " + std::to_string(k.moe_tile) +
                       " needs gemm_half (it shapes the f16 grouped expert GEMM of a chunk)";
              });
     }},
    {"fuse_norm: gemv_split 1 (the norm is folded into the plain GEMV)",
     "fuse_norm gemv_split",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.fuse_norm || k.gemv_split == 1 ||
              broken(why, [] { return std::string("fuse_norm needs gemv_split 1 (it folds into the plain GEMV)"); });
     }},
    {"norm_fold: the int8 numerics' copy (gemv_prequant) and the plain GEMVs (gemv_split 1), not fuse_norm",
     "norm_fold numerics gemv_prequant gemv_split fuse_norm",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.norm_fold || (int8_numerics(k) && k.gemv_prequant && k.gemv_split == 1 && !k.fuse_norm) ||
              broken(why, [&] {
                return std::string("norm_fold needs the int8 numerics, gemv_prequant and gemv_split 1, without "
                                   "fuse_norm (") +
                       to_string(k.numerics) + ", gemv_prequant " + (k.gemv_prequant ? "true" : "false") +
                       ", gemv_split " + std::to_string(k.gemv_split) + ", fuse_norm " +
                       (k.fuse_norm ? "true" : "false") + ")";
              });
     }},
    {"norm_fold_groups: norm_fold (it shapes the folded projections)",
     "norm_fold_groups norm_fold",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.norm_fold_groups || k.norm_fold ||
              broken(why, [] { return std::string("norm_fold_groups needs norm_fold (it shapes its projections)"); });
     }},
    {"glu_groups: gemv_prequant (the int8 copy the fused gate/up reads) and fuse_glu",
     "glu_groups gemv_prequant fuse_glu",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.glu_groups || (k.gemv_prequant && k.fuse_glu) || broken(why, [&] {
         return std::string("glu_groups needs gemv_prequant and fuse_glu (gemv_prequant ") +
                (k.gemv_prequant ? "true" : "false") + ", fuse_glu " + (k.fuse_glu ? "true" : "false") + ")";
       });
     }},
    {"attn_heads: 0 or a divisor of the query heads a key/value head serves",
     "attn_heads",
     [](const Space& s, const Knobs& k, std::string* why) {
       const int group = s.model.kv_heads ? int(s.model.heads / s.model.kv_heads) : 1;
       return k.attn_heads == 0 || (k.attn_heads > 0 && k.attn_heads <= group && group % k.attn_heads == 0) ||
              broken(why, [&] {
                return "attn_heads " + std::to_string(k.attn_heads) + " is not 0 or a divisor of the " +
                       std::to_string(group) + " query heads a key/value head serves";
              });
     }},
    {"fuse_rope: fuse_qkv and fuse_rope_kv (the fused projection's tail ropes and appends)",
     "fuse_rope fuse_qkv fuse_rope_kv",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.fuse_rope || (k.fuse_qkv && k.fuse_rope_kv) || broken(why, [] {
         return std::string(
             "fuse_rope needs fuse_qkv and fuse_rope_kv (the fused projection's last block ropes and appends)");
       });
     }},
    {"side_streams: fuse_qkv or fuse_glu off (else no two launches of a step are independent; a mixture without a "
     "shared expert has no gate and up to keep apart: fuse_qkv off)",
     "side_streams fuse_qkv fuse_glu",
     [](const Space& s, const Knobs& k, std::string* why) {
       return !(k.side_streams && k.fuse_qkv && (k.fuse_glu || !has_gate_and_up(s.model))) || broken(why, [] {
         return std::string(
             "side_streams needs fuse_qkv or fuse_glu off: with both on (or fuse_qkv on in a mixture without a shared "
             "expert) no two launches of a step are independent");
       });
     }},
    {"fuse_glu: a dense FFN or a shared expert (a mixture's experts pair their gate and up always)",
     "fuse_glu",
     [](const Space& s, const Knobs& k, std::string* why) {
       return !k.fuse_glu || has_gate_and_up(s.model) || broken(why, [] {
         return std::string(
             "fuse_glu needs a dense FFN or a shared expert (this mixture's experts pair their gate and up "
             "always)");
       });
     }},
    {"gemv_short: the int8 numerics and unsplit GEMVs (gemv_split 1)",
     "gemv_short numerics gemv_split",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.gemv_short || (int8_numerics(k) && k.gemv_split == 1) || broken(why, [&] {
                return std::string("gemv_short needs the int8 numerics and gemv_split 1 (") + to_string(k.numerics) +
                       ", gemv_split " + std::to_string(k.gemv_split) + ")";
              });
     }},
    {"glu_stage: the int8 numerics' copy (gemv_prequant) under fuse_glu, one row a warp",
     "glu_stage numerics gemv_prequant fuse_glu gemv_rows_per_warp",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.glu_stage || (int8_numerics(k) && k.gemv_prequant && k.fuse_glu && k.gemv_rows_per_warp == 1) ||
              broken(why, [&] {
                return std::string("glu_stage needs the int8 numerics, gemv_prequant, fuse_glu and ") +
                       "gemv_rows_per_warp 1 (" + to_string(k.numerics) +
                       (k.gemv_prequant ? "" : ", no gemv_prequant") + (k.fuse_glu ? "" : ", no fuse_glu") +
                       ", gemv_rows_per_warp " + std::to_string(k.gemv_rows_per_warp) + ")";
              });
     }},
    {"pdl: the GPU is sm_90 or later",
     "pdl",
     [](const Space& s, const Knobs& k, std::string* why) {
       return !k.pdl || s.target.arch >= 90 || broken(why, [&] {
         return "pdl needs sm_90 or later; the target is sm_" + std::to_string(s.target.arch);
       });
     }},
    {"pdl_first: pdl", "pdl_first pdl",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.pdl_first || k.pdl || broken(why, [] {
         return std::string("pdl_first needs pdl (it orders the programmatic launches' trigger and wait)");
       });
     }},
    {"fuse_qkv_mixed: fuse_qkv", "fuse_qkv_mixed fuse_qkv",
     [](const Space&, const Knobs& k, std::string* why) {
       return !k.fuse_qkv_mixed || k.fuse_qkv || broken(why, [] {
         return std::string("fuse_qkv_mixed needs fuse_qkv (it adds a v of another format to the fused launch)");
       });
     }},
    {"fuse_qkv: the q, k and v projections' rows are multiples of their format's rows a warp (a warp's rows in one "
     "matrix)",
     "fuse_qkv gemv_rows_per_warp gemv_rows_q6_k",
     [](const Space& s, const Knobs& k, std::string* why) {
       if (!k.fuse_qkv) return true;
       const model::Model& m = s.model;
       const uint64_t rows[] = {uint64_t(m.heads) * m.head_dim, uint64_t(m.kv_heads) * m.head_dim,
                                uint64_t(m.kv_heads) * m.value_dim};
       for (const model::Layer& L : m.layer) {
         const gguf::TensorInfo* w[] = {L.wq, L.wk, L.wv};
         for (int i = 0; i < 3; ++i) {
           const int rpw = w[i] ? gemv_rows(k, w[i]->type) : k.gemv_rows_per_warp;
           if (rows[i] % static_cast<uint64_t>(rpw) != 0)
             return broken(why, [&] {
               return "fuse_qkv: a projection of " + std::to_string(rows[i]) + " rows is not a multiple of " +
                      std::to_string(rpw) + " (" +
                      (rpw == k.gemv_rows_per_warp ? "gemv_rows_per_warp" : "gemv_rows_q6_k") + ")";
             });
         }
       }
       return true;
     }},
};

// The constraints between knobs: true when `k` breaks none; else false, and the first broken one in words into `why`
// when it is not null.
bool constrained(const Space& s, const Knobs& k, std::string* why) {
  for (const Rule& r : kRules)
    if (!r.holds(s, k, why)) return false;
  return true;
}

}  // namespace

Space space(const model::Model& m, const Target& t) {
  if (t.context < 0 || (t.context > 0 && m.context > 0 && uint32_t(t.context) > m.context))
    throw Error("context " + std::to_string(t.context) + " is outside 1.." + std::to_string(m.context) +
                ", the model's trained context (0: the model's, at most 4096)");
  Space s;
  s.model = m;
  s.target = t;
  s.domains = domains_for(m, t);
  s.constraints = {"every knob takes a value of its domain"};
  for (const Rule& r : kRules) s.constraints.push_back(r.text);
  return s;
}

std::string Space::why_invalid(const Knobs& k) const {
  const json j = k.to_json();
  for (const Domain& d : domains) {
    if (std::find(d.values.begin(), d.values.end(), j.at(d.name)) == d.values.end())
      return "knob " + d.name + " = " + j.at(d.name).dump() + " is outside its domain " + json(d.values).dump() +
             " for this checkpoint and GPU (`lane-tune knobs CHECKPOINT` says each knob's domain and why)";
  }
  return why_constrained(k);
}

std::string Space::why_constrained(const Knobs& k) const {
  std::string why;
  constrained(*this, k, &why);
  return why;
}

bool Space::allows(const Knobs& k) const {
  return constrained(*this, k, nullptr);
}

void Space::check(const Knobs& k) const {
  if (std::string why = why_invalid(k); !why.empty()) throw Error(why);
}

std::vector<Knobs> Space::enumerate() const {
  std::vector<Knobs> out;
  each([&](const Knobs& k) { out.push_back(k); });
  return out;
}

namespace {

// The names in a rule's `reads`.
std::vector<std::string> names_in(const char* reads) {
  std::vector<std::string> out;
  std::istringstream in(reads);
  for (std::string n; in >> n;) out.push_back(n);
  return out;
}

// The knobs most rules read beside their own: fixing them splits the others into small independent groups.
constexpr const char* kHubs[] = {"numerics", "max_chunk", "gemm_half", "fuse_glu", "fuse_qkv"};

// The space split by the rules' reads: the hub knobs (kHubs) and the rules that read only hubs; the other knobs the
// rules read, in groups that no rule spans (a rule's non-hub knobs are one group), each with its rules; the knobs no
// rule reads (free).
struct Split {
  std::vector<size_t> hubs, free;
  std::vector<std::vector<size_t>> group_knobs;
  std::vector<std::vector<const Rule*>> group_rules;
  std::vector<const Rule*> hub_rules;

  explicit Split(const std::vector<Domain>& domains) {
    const size_t n = domains.size();
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < n; ++i) index[domains[i].name] = i;
    std::vector<bool> hub(n, false);
    for (const char* h : kHubs)
      if (auto it = index.find(h); it != index.end()) hub[it->second] = true;
    // Each rule's non-hub knobs; groups of knobs by union-find over them.
    std::vector<size_t> parent(n);
    for (size_t i = 0; i < n; ++i) parent[i] = i;
    const std::function<size_t(size_t)> root = [&](size_t i) {
      return parent[i] == i ? i : parent[i] = root(parent[i]);
    };
    std::vector<bool> read(n, false);
    std::vector<std::vector<size_t>> own(std::size(kRules));
    for (size_t r = 0; r < std::size(kRules); ++r)
      for (const std::string& name : names_in(kRules[r].reads)) {
        const size_t i = index.at(name);
        read[i] = true;
        if (hub[i]) continue;
        if (!own[r].empty()) parent[root(i)] = root(own[r].front());
        own[r].push_back(i);
      }
    std::map<size_t, size_t> group_of;  // a group's root -> its index
    for (size_t i = 0; i < n; ++i) {
      if (hub[i]) {
        hubs.push_back(i);
      } else if (!read[i]) {
        free.push_back(i);
      } else {
        const auto [at, fresh] = group_of.emplace(root(i), group_knobs.size());
        if (fresh) group_knobs.emplace_back();
        group_knobs[at->second].push_back(i);
      }
    }
    group_rules.resize(group_knobs.size());
    for (size_t r = 0; r < std::size(kRules); ++r)
      (own[r].empty() ? hub_rules : group_rules[group_of.at(root(own[r].front()))]).push_back(&kRules[r]);
  }
};

// Whether `k` keeps every rule of `rules`.
bool holds_all(const Space& s, const std::vector<const Rule*>& rules, const Knobs& k) {
  for (const Rule* r : rules)
    if (!r->holds(s, k, nullptr)) return false;
  return true;
}

// Visits every setting of `knobs` (an odometer over their domains) in `k`, the last fastest; `visit(at)` sees each
// knob's value index. Leaves `k` at the first setting.
template <class Visit>
void walk(const std::vector<Domain>& domains, const std::vector<size_t>& knobs, Knobs& k, Visit&& visit) {
  std::vector<size_t> at(knobs.size(), 0);
  for (size_t j = 0; j < knobs.size(); ++j) k.set(domains[knobs[j]].name, domains[knobs[j]].values[0]);
  for (;;) {
    visit(at);
    size_t j = knobs.size();
    for (;;) {
      if (j == 0) return;
      --j;
      const Domain& d = domains[knobs[j]];
      if (++at[j] < d.values.size()) {
        k.set(d.name, d.values[at[j]]);
        break;
      }
      at[j] = 0;
      k.set(d.name, d.values[0]);
    }
  }
}

// A setting of the hub knobs that the hub rules allow, with valid points under it: its value indices, how many valid
// points it holds (its groups' valid settings multiplied, the free knobs left out), and each group's valid settings
// under it (each its knobs' value indices, one after another).
struct Hub {
  std::vector<size_t> at;
  uint64_t points = 0;
  std::vector<std::vector<uint16_t>> valid;
};

// Every hub setting with valid points, in the walk's order, each group's product walked once under it.
std::vector<Hub> hub_tables(const Space& s, const Split& split) {
  std::vector<Hub> out;
  Knobs k = knobs_of(s.domains, std::vector<size_t>(s.domains.size(), 0));
  walk(s.domains, split.hubs, k, [&](const std::vector<size_t>& at) {
    if (!holds_all(s, split.hub_rules, k)) return;
    Hub h{at, 1, {}};
    for (size_t g = 0; g < split.group_knobs.size() && h.points; ++g) {
      std::vector<uint16_t> settings;
      walk(s.domains, split.group_knobs[g], k, [&](const std::vector<size_t>& setting) {
        if (holds_all(s, split.group_rules[g], k)) settings.insert(settings.end(), setting.begin(), setting.end());
      });
      h.points *= settings.size() / split.group_knobs[g].size();
      h.valid.push_back(std::move(settings));
    }
    if (h.points) out.push_back(std::move(h));
  });
  return out;
}

}  // namespace

// Counted by the rules' reads (Split): for each setting of the hub knobs that the rules reading only hubs allow, each
// group's valid settings counted by walking its own product, the groups' counts multiplied; the free knobs multiply
// the whole. The same count as walking every point (tests/compiler/lane_test.cpp checks both, and each rule's reads),
// in milliseconds where the walk took minutes (an 8B Q4_K_M's 145 M points).
size_t Space::size() const {
  for (const Domain& d : domains)
    if (d.values.empty()) return 0;
  const Split split(domains);
  size_t free = 1;
  for (size_t i : split.free) free *= domains[i].values.size();
  size_t total = 0;
  for (const Hub& h : hub_tables(*this, split)) total += h.points;
  return total * free;
}

void narrow(Space& s, const json& where) {
  if (!where.is_object()) throw Error("knobs to narrow to must be a JSON object, not " + where.dump());
  for (const auto& item : where.items()) {  // (not a structured binding: clang 14 cannot capture one, and fuzzes this)
    const std::string& name = item.key();
    const json& v = item.value();
    auto d = std::find_if(s.domains.begin(), s.domains.end(), [&](const Domain& x) { return x.name == name; });
    const json wanted = v.is_array() ? v : json::array({v});
    if (d == s.domains.end()) {
      bool skip = !wanted.empty();
      for (const json& w : wanted) skip = retired_default(name, w) && skip;
      if (skip) continue;
      throw unknown_knob(name);
    }
    for (const json& w : wanted)
      if (std::find(d->values.begin(), d->values.end(), w) == d->values.end())
        throw Error("knob " + name + " = " + w.dump() + " is outside its domain " + json(d->values).dump());
    std::vector<json> kept;
    for (const json& x : d->values)
      if (std::find(wanted.begin(), wanted.end(), x) != wanted.end()) kept.push_back(x);
    d->values = std::move(kept);
  }
}

std::string unlisted_reads(const Space& s, uint64_t seed, int samples) {
  std::mt19937_64 rng(seed);
  const uint64_t raw = s.raw_size();
  for (int t = 0; t < samples; ++t) {
    const Knobs k = s.at(std::uniform_int_distribution<uint64_t>(0, raw - 1)(rng));
    for (const Rule& r : kRules) {
      const std::vector<std::string> reads = names_in(r.reads);
      const bool before = r.holds(s, k, nullptr);
      for (const Domain& d : s.domains) {
        if (std::find(reads.begin(), reads.end(), d.name) != reads.end()) continue;
        for (const json& v : d.values) {
          Knobs other = k;
          other.set(d.name, v);
          if (r.holds(s, other, nullptr) != before)
            return std::string("the rule \"") + r.text + "\" reads " + d.name + " but does not list it";
        }
      }
    }
  }
  return "";
}

uint64_t Space::raw_size() const {
  uint64_t n = 1;
  for (const Domain& d : domains) n *= d.values.size();
  return n;
}

Knobs Space::at(uint64_t ordinal) const {
  Knobs k;
  for (size_t i = domains.size(); i > 0; --i) {
    const Domain& d = domains[i - 1];
    k.set(d.name, d.values[ordinal % d.values.size()]);
    ordinal /= d.values.size();
  }
  return k;
}

// The grid walked as an odometer (the last domain fastest), each step setting only the knobs whose values changed.
void Space::each(const std::function<void(const Knobs&)>& visit) const {
  std::vector<size_t> at(domains.size(), 0);
  Knobs k = knobs_of(domains, at);
  for (;;) {
    if (allows(k)) visit(k);
    size_t i = domains.size();
    while (i > 0) {
      --i;
      if (++at[i] < domains[i].values.size()) {
        k.set(domains[i].name, domains[i].values[at[i]]);
        break;
      }
      at[i] = 0;
      k.set(domains[i].name, domains[i].values[0]);
      if (i == 0) return;
    }
    if (domains.empty()) return;
  }
}

Knobs Space::sample(std::mt19937_64& rng) const {
  // By rejection first (cheap where the constraints allow a fair share of the product: about 1 in 1,000 today), then,
  // where 2,000 tries found none, exactly. Either way every valid point is as likely as any other (a rejection draw
  // that succeeds is uniform over the valid points).
  for (int tries = 0; tries < 2000; ++tries) {
    std::vector<size_t> at;
    // (a domain of one value draws nothing: a knob a checkpoint cannot vary, such as gemv_rows_q6_k without Q6_K
    // matrices, leaves the draws of the others as they were)
    for (const Domain& d : domains)
      at.push_back(d.values.size() > 1 ? std::uniform_int_distribution<size_t>(0, d.values.size() - 1)(rng) : 0);
    Knobs k = knobs_of(domains, at);
    if (allows(k)) return k;
  }
  return sample_exact(rng).front();
}

struct Sampler::Tables {
  Space space;
  Split split{space.domains};
  std::vector<Hub> hubs;
  std::vector<uint64_t> through;  // the running count of valid points (free knobs left out) through each hub
};

Sampler::Sampler(const Space& s) {
  auto t = std::make_shared<Tables>(Tables{.space = s});
  for (const Domain& d : t->space.domains)
    if (d.values.empty()) throw Error("the knob space has no valid point (" + d.name + " has no value)");
  t->hubs = hub_tables(t->space, t->split);
  uint64_t total = 0;
  for (const Hub& h : t->hubs) t->through.push_back(total += h.points);
  if (total == 0) throw Error("the knob space has no valid point");
  t_ = std::move(t);
}

Knobs Sampler::draw(std::mt19937_64& rng) const {
  const Tables& t = *t_;
  const std::vector<Domain>& domains = t.space.domains;
  const uint64_t pick = std::uniform_int_distribution<uint64_t>(0, t.through.back() - 1)(rng);
  const size_t h = std::upper_bound(t.through.begin(), t.through.end(), pick) - t.through.begin();
  std::vector<size_t> at(domains.size(), 0);
  for (size_t j = 0; j < t.split.hubs.size(); ++j) at[t.split.hubs[j]] = t.hubs[h].at[j];
  for (size_t g = 0; g < t.split.group_knobs.size(); ++g) {
    const std::vector<size_t>& knobs = t.split.group_knobs[g];
    const std::vector<uint16_t>& settings = t.hubs[h].valid[g];
    const size_t chosen = std::uniform_int_distribution<size_t>(0, settings.size() / knobs.size() - 1)(rng);
    for (size_t j = 0; j < knobs.size(); ++j) at[knobs[j]] = settings[chosen * knobs.size() + j];
  }
  for (size_t f : t.split.free) at[f] = std::uniform_int_distribution<size_t>(0, domains[f].values.size() - 1)(rng);
  Knobs k = knobs_of(domains, at);
  if (!t.space.allows(k)) throw Error("knobs: an exact draw broke a rule (a rule reads a knob it does not list)");
  return k;
}

std::vector<Knobs> Space::sample_exact(std::mt19937_64& rng, size_t n) const {
  const Sampler sampler(*this);
  std::vector<Knobs> out;
  for (size_t i = 0; i < n; ++i) out.push_back(sampler.draw(rng));
  return out;
}

json Space::to_json() const {
  json d = json::array();
  for (const Domain& x : domains) d.push_back({{"name", x.name}, {"help", x.help}, {"values", x.values}});
  return {{"knobs", d},
          {"constraints", constraints},
          {"target",
           {{"sms", target.sms},
            {"arch", target.arch},
            {"context", lane_context(model, Knobs{.context = target.context})}}},
          {"points", size()}};
}

}  // namespace lt::knobs
