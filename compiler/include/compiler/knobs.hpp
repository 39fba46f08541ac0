// The lane's knobs: one configuration of the emitted program, and the space of them for a checkpoint and a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/model.hpp"

namespace lt::knobs {

// How a lane computes: f32 activations with weights dequantized in registers; f64 sums (the reference lane); or
// products of Q8_0 weights and activations quantized to int8 per 32-block, in integers (int8: one word an activation;
// int8x2: a second word for the first's residual). Matrices in other formats keep the dequant products.
enum class Numerics { Dequant, Precise, Int8, Int8x2 };

const char* to_string(Numerics n);

// The element of the key/value caches: the activations' own type (f32; f64 under the precise numerics), f16, bf16, or
// q8_0 (int8 values with an f16 scale a 32-block, as llama.cpp's q8_0 cache).
enum class KvCache { Act, F16, Bf16, Q8_0 };

const char* to_string(KvCache c);

// One configuration of a lane. Every field changes the emitted program.
struct Knobs {
  Numerics numerics = Numerics::Dequant;
  bool cuda_graphs = true;     // each form's step captured once as a CUDA graph
  int max_chunk = 16;          // the largest prefill chunk; the chunks are 2, 4, ... max_chunk (1: no chunks)
  int gemv_rows_per_warp = 1;  // output rows a warp of the GEMV computes
  int gemv_rows_q6_k = 0;      // the same for the Q6_K matrices (0: gemv_rows_per_warp); 6-bit codes are wider loads
  int gemv_warps = 8;          // warps a GEMV block holds
  int gemv_split = 1;          // warps that share each output row's units (split-K), their sums met in shared memory
  bool gemv_short = false;     // a plain GEMV whose rows are one round of loads: 4x the rows a warp, one unit each
  bool glu_stage = false;      // the fused gate/up GEMV's blocks stage the int8 copy's row in shared memory
  int attn_splits = 4;         // decode attention: the positions split over this many blocks, then folded
  bool attn_fold_launch = false;  // the decode step's split attention on the tensor cores folded by a launch of its
                                  // own (a block a query head), not by its last block a key/value head
  bool fuse_qkv = false;       // q, k and v projected by one launch over the three matrices
  bool fuse_qkv_mixed = false;  // under fuse_qkv, a v in another format than q and k in the same launch
  bool fuse_glu = false;       // gate and up projected by one launch that applies SwiGLU to its sums
  bool fuse_rope_kv = false;   // the key/value cache append folded into rope's launch
  bool pdl = false;            // programmatic dependent launch: a launch starts while the one before it drains
  bool pdl_first = false;      // under pdl, a launch lets the next one start before its wait, not after it
  int gemm_rows = 64;          // output rows a block of the int8 prefill GEMM computes (8 a warp; 16 prequantized)
  bool fuse_norm = false;      // the add + norm after the o and down projections done by the projection's last block
  bool norm_fold = false;      // the decode step's add + norm after the o and down projections folded into them: each
                               // 128-value span's last block adds, quantizes x * w; the projections after scale
  bool norm_fold_groups = false;  // norm_fold's projections in blocks of one 32-group of rows, each ending its own
                                  // group after a barrier (no counters or fences)
  bool glu_groups = false;  // the decode step's fused gate/up GEMV over short rows of a block format in blocks of one
                            // 32-group of outputs, each writing its group's int8 copy (no quantize launch after it)
  int attn_heads = 0;          // query heads a decode attention block computes (0: its key/value head's whole group)
  bool fuse_rope = false;      // rope, the per-head norm and the cache append done by the q/k/v projection's last block
  bool side_streams = false;   // launches that do not depend on each other run side by side on side streams
  bool gemm_prequant = false;  // a chunk's activations quantized once into an int8 buffer its tensor-core GEMMs read
  bool gemv_prequant = false;  // the GEMVs' activations (a step's, a chunk's slabs) quantized once into an int8 buffer
  int gemm_tile = 0;           // the prefill GEMMs as tiles staged in shared memory, of at most this many activation
                               // rows (0: the untiled kernels)
  KvCache kv_cache = KvCache::Act;  // the caches' element type
  bool attn_lanes = false;          // decode attention with a lane a position (32 positions a warp at once)
  int attn_mma = 0;  // attention on the tensor cores (flash-style; a 16-bit cache): 1 a chunk's, 2 the decode step's too
  int context = 0;                  // positions the caches hold (0: the model's context, at most 4096)
  bool gemm_half = false;  // a chunk's GEMMs on the tensor cores in f16 (activations and unpacked weights rounded)
  int moe_tile = 0;        // pairs a tile of a mixture's grouped expert GEMM under gemm_half (0: by the pairs an expert
                           // sees, 128 from 64 on average, else 64)

  nlohmann::json to_json() const;
  // Reads a configuration; fields absent take their defaults; throws lt::Error naming a bad or unknown knob.
  static Knobs from_json(const nlohmann::json& j);
  // Parses knobs' JSON text (`where` names it in errors): at most 8 levels of nesting (a knob set is one flat object),
  // so that a hostile file cannot exhaust the stack. Throws lt::Error saying what is wrong.
  static nlohmann::json parse(std::string_view text, const std::string& where);
  // Sets the knob `name` from its JSON value; throws lt::Error as from_json does.
  void set(const std::string& name, const nlohmann::json& v);
  // The canonical text of the configuration (sorted JSON), the key results are stored by.
  std::string key() const;
  // The prefill chunk sizes, largest first.
  std::vector<int> chunks() const;
  bool operator==(const Knobs&) const = default;
};

// The output rows one warp of a decode GEMV over a matrix of type `t` computes: gemv_rows_q6_k for Q6_K where set,
// else gemv_rows_per_warp.
int gemv_rows(const Knobs& k, ggml::Type t);

// The positions a lane of model `m` holds under knobs `k`: k.context, or when 0 the model's context at most 4096.
int lane_context(const model::Model& m, const Knobs& k);

// Bytes of a key/value cache of `elements` values of type `c` (`act_bytes` each under KvCache::Act; a q8_0 cache adds
// an f16 scale a 32-block).
size_t kv_cache_bytes(KvCache c, size_t elements, size_t act_bytes);

// The relative L2 error of the logits a cache type may add to a lane's (against the precise lane, measured on trained
// weights: bench/NOTES.md); 0 for KvCache::Act. A lane under a compact cache may also flip near ties.
double kv_cache_bound(KvCache c);

// The relative L2 error of the logits the knobs' roundings may add to a lane's numerics: a compact cache's
// (kv_cache_bound), and gemm_half's (a chunk's GEMMs over f16 activations and weights), in quadrature (independent
// errors; tolerance joins it to the numerics' bound the same way). Such a lane may also flip near ties.
double rounding_bound(const Knobs& k);

// What the judge holds a configuration's logits to against the precise lane: the relative L2 error it may show, the
// arg-max agreement it must reach, and `tie`: how near the reference's top two logits may be (times the row's RMS)
// for a flip of them to be allowed (0: none). A lane's lane.json carries its configuration's, so that every script
// and tool judges it by the one rule the worker applies.
struct Tolerance {
  double rel_l2 = 1e-3;
  double argmax_agree = 0.99;
  double tie = 0;
};
// How far the precise lane's logits (the configurations' judge) may stray from the CPU reference's (relative L2;
// measured on the H200: 0 to 3.4e-8). A lane against the CPU reference directly: its bound plus this.
inline constexpr double kPreciseAgainstCpu = 1e-6;
// The numerics' own bound.
Tolerance tolerance(Numerics n);
// A configuration's: its numerics', widened by its knobs' roundings (rounding_bound: the cache, gemm_half).
Tolerance tolerance(const Knobs& k);
nlohmann::json to_json(const Tolerance& t);

// What a space is for: the GPU (its multiprocessors and compute capability, 90: sm_90) and the positions its lanes
// hold (0: the model's context, at most 4096; else at most the model's trained context), the `context` knob's one
// value.
struct Target {
  int sms = 132;
  int arch = 90;
  int context = 0;
};

// Whether `m`'s heads fit the tensor-core attention (attn_mma) on `t`: key and value heads multiples of 16 wide (the
// mma's k) and at most 128 (a warp holds its 16 rows' values in registers), or at most 256 on sm_90 and later (the
// queries then read from shared memory at each use, and a block's stages of 256-wide tiles take up to 206 KiB of
// shared memory: more than sm_80's 163).
bool mma_attention_fits(const model::Model& m, const Target& t);

// One knob's domain: its name, what it does, and the values it may take.
struct Domain {
  std::string name;
  std::string help;
  std::vector<nlohmann::json> values;
};

// The knob space for one checkpoint and GPU: each knob's domain and the constraints between knobs.
struct Space {
  std::vector<Domain> domains;
  std::vector<std::string> constraints;  // in words, as `lane-tune knobs` prints them
  model::Model model;
  Target target;

  // Why `k` is not a point of the space, or empty when it is.
  std::string why_invalid(const Knobs& k) const;
  // Throws lt::Error with why_invalid's reason.
  void check(const Knobs& k) const;
  // Why `k`, whose knobs lie in their domains, breaks a constraint between knobs, or empty when it does not.
  std::string why_constrained(const Knobs& k) const;
  // Whether `k`, whose knobs lie in their domains, breaks no constraint: why_constrained(k).empty() without building
  // the reason's words (the grid's and the count's test of a point).
  bool allows(const Knobs& k) const;
  // Every valid point, in a fixed order (the grid); how many there are; each visited in that order. size() counts
  // by the knobs each constraint reads, without visiting the points (an 8B Q4_K_M's 145 M in milliseconds).
  std::vector<Knobs> enumerate() const;
  size_t size() const;
  void each(const std::function<void(const Knobs&)>& visit) const;
  // How many points the domains span, valid or not: the product of their sizes.
  uint64_t raw_size() const;
  // The point at `ordinal` of the domains' product, the last domain fastest (the order `each` visits); it may break a
  // constraint (see allows). REQUIRES: ordinal < raw_size().
  Knobs at(uint64_t ordinal) const;
  // A valid point drawn uniformly: by rejection from the domains' product, and where that keeps failing (a space whose
  // constraints allow under 1 in 2,000 of its product) by sample_exact. Throws lt::Error when there is no valid point.
  Knobs sample(std::mt19937_64& rng) const;
  // `n` valid points drawn uniformly (independently) without rejection, by a Sampler of this space (its tables once a
  // call, in a fraction of a second; then microseconds a point).
  std::vector<Knobs> sample_exact(std::mt19937_64& rng, size_t n = 1) const;
  nlohmann::json to_json() const;
};

// Uniform draws of a space's valid points without rejection, for a search that draws thousands a turn: a setting of
// the knobs most rules read (Split's hubs), by how many valid points it holds, then each independent group of the
// other knobs the rules read uniformly among its valid settings under that hub setting, then the free knobs. The
// hub settings' counts and every group's valid settings under each are tabled once (as size() counts them), so a
// draw takes microseconds (session 39: sample_exact walked each group's product a draw, 2.4 ms a point, and a model
// search's 2,000 draws a turn held a worker without plans ~8-10 s). Copies share the tables; draws are const and
// thread-safe.
class Sampler {
 public:
  // Throws lt::Error when the space has no valid point.
  explicit Sampler(const Space& s);
  Knobs draw(std::mt19937_64& rng) const;

 private:
  struct Tables;
  std::shared_ptr<const Tables> t_;
};

// A constraint of `s` whose verdict changes with a knob it does not list among those it reads (what size() counts
// by), found by changing each unlisted knob of `samples` points drawn from the domains' product; empty when none.
std::string unlisted_reads(const Space& s, uint64_t seed, int samples);

// Narrows `s`'s domains to `where`: a JSON object of knobs, each a value or a list of values (the order its domain
// has). Throws lt::Error for an unknown knob or a value outside its domain, naming it.
void narrow(Space& s, const nlohmann::json& where);

// The space for `m` on `t`; throws lt::Error when t.context is negative or past the model's trained context.
Space space(const model::Model& m, const Target& t);

}  // namespace lt::knobs
