// The lane's schedule: what the program runs, kept apart from how it is printed. Its forms (the decode step and the
// prefill chunks), their launches over named buffers, the arena the step-local buffers are packed into by liveness,
// the weights it uploads, the carried state, and the sidecar of computed constants.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/model.hpp"

namespace lt::lane {

// A place in a buffer: its name and an element offset into it.
struct Ref {
  std::string buf;
  size_t offset = 0;
  bool operator==(const Ref&) const = default;
};

// A weight matrix uploaded from the checkpoint: its C name, tensor, shape (rows outputs of cols inputs) and format.
// A mixture's 3-D expert tensor is one matrix of every expert's rows in the checkpoint's order: `experts` of them,
// expert e's rows e * rows / experts onwards.
struct Matrix {
  std::string name;
  const gguf::TensorInfo* tensor = nullptr;
  size_t rows = 0, cols = 0;
  ggml::Type type = ggml::Type::F32;
  size_t experts = 1;
  uint64_t device_bytes() const;  // as uploaded (Q8_0 split into int8 rows and f16 scales)
};

// An f32 vector uploaded from the checkpoint (a norm's weights, a bias).
struct Vector {
  std::string name;
  const gguf::TensorInfo* tensor = nullptr;
  size_t n = 0;
};

// A computed constant in the sidecar: `count` lk_act values from byte `offset`.
struct SideArray {
  std::string name;
  size_t offset = 0, count = 0;
};

// Where a buffer lives: the step's arena (packed by liveness), or carried across steps (caches, token, position).
enum class Life { Step, Carried };
// Kv: a key/value cache's element (knobs::KvCache; lk_kv in the program), of knobs::kv_cache_bytes a cache.
enum class Elem { Act, Acc, Int, Kv };

// A buffer of a form (step-local) or of the lane (carried).
struct Buffer {
  std::string name;
  size_t count = 0;
  Elem elem = Elem::Act;
  Life life = Life::Step;
};

// The launches, one struct a kind of kernel.
struct Embed {  // out = E[tok] * scale (gemma3: sqrt(d_model); 1 elsewhere)
  std::string table;
  Ref tok, out;
  int rows;
  float scale = 1.f;
};
struct AddNorm {  // x += add (if any), out = norm(x) * w, over `rows` rows from the refs
  Ref x;
  std::optional<Ref> add;
  std::string w;
  Ref out;
  int rows;
  // The decode step's quantized copy of out (gemv_prequant), or a chunk's f16 copy (gemm_half: xq_half), written by
  // this launch too: the QuantizeI8 the projections after it would need, folded in.
  std::optional<std::string> xq = std::nullopt;
  bool xq_half = false;
};
// Under gemm_prequant (on the tensor cores) or gemv_prequant (the decode step), a projection reads `xq`, x quantized
// once by a QuantizeI8 before it.
struct Gemv {  // y = W x (+ bias) over `rows` activation rows
  std::string w;
  Ref x;
  std::optional<std::string> bias;
  Ref y;
  int rows;
  std::optional<std::string> xq;
};
struct GemvParts {  // y_p = W_p x (+ bias_p) for the parts p, one launch
  Ref x;
  std::vector<Gemv> parts;  // each part's matrix, bias and output (their x is `x`)
  int rows;
  std::optional<std::string> xq;
};
struct GemvGlu {  // out = silu(G x) * (U x)
  std::string wg, wu;
  Ref x, out;
  int rows;
  std::optional<std::string> xq;
  // glu_groups: the quantized copy of `out` the launch writes too (the decode step's, where its blocks end whole
  // 32-groups of outputs: lk_glu_group_units), in place of a quantize launch; or (out_half) a chunk's f16 copy of it,
  // written by its GEMM's tiles on the tensor cores (gemm_half).
  std::optional<std::string> out_xq = std::nullopt;
  bool out_half = false;
  // out_half, and no launch reads `out` but through that copy: the GEMM writes the copy alone (half_only_outputs).
  bool half_only = false;
};
// The int8 numerics' activations quantized once (gemm_prequant, gemv_prequant): `rows` rows of `k` into `xq`, its
// words' int8 values, in the tensor cores' order (`fragments`, a chunk's) or row by row (the decode step's), then
// their f32 scales (kernels/gemm.cuh, lk_quantize_i8, has the layouts). Under gemm_half a chunk's copy is its values
// rounded to f16 instead (`half`; lk_half_rows), row by row.
struct QuantizeI8 {
  Ref x;
  std::string xq;
  int rows;
  size_t k;
  bool fragments;
  bool half = false;
};
struct KvAppend {
  Ref k, v;
  std::string kc, vc;
  int rows;
};
struct Rope {  // rope of q and k in place, the per-head norm first when qn/kn are set
  Ref q, k;
  std::optional<std::string> qn, kn;
  int rows;
  std::optional<KvAppend> append;  // the cache append folded in (its k is the roped k)
  // The sidecar's tables it reads: 0 the model's (c_rope_cos, c_rope_sin), 1 the sliding layers' own (gemma3:
  // c_rope_cos_swa, c_rope_sin_swa; model::Model::sliding_rope).
  int table = 0;
};
// With splits > 1 it writes `part` and a Fold follows; a block computes `heads` query heads. On a sliding layer
// (window > 0) a row attends to its last `window` positions only; with `sinks` (a weight vector, a logit per query
// head) each head's sink joins its softmax's denominator where the output is normalized (here, or the Fold's).
struct Attention {
  Ref q;
  std::string kc, vc;
  Ref out;
  std::optional<Ref> part;
  int rows, splits, heads;
  std::optional<std::string> sinks;
  int window = 0;
  // With one split, the decode step's quantized copy of out (gemv_prequant), written by this launch too (as Fold::xq).
  std::optional<std::string> xq = std::nullopt;
  // The decode step on the tensor cores under fuse_rope_kv: rope with its append, done by this launch first (q, k and
  // append's v are the projections' outputs; k and q are not roped in place).
  std::optional<Rope> rope = std::nullopt;
  // The decode step on the tensor cores with splits: the block that finishes a head group's last split folds the
  // splits' partials (part) into out, as Fold would, with the sinks (Fold's launch folded in; its count in attn_count).
  bool fold = false;
};
struct Fold {
  Ref part, out;
  int rows, splits;
  std::optional<std::string> sinks;
  // The decode step's quantized copy of out (gemv_prequant), written by this launch too (as AddNorm::xq).
  std::optional<std::string> xq = std::nullopt;
};
struct SwiGlu {  // out = act(g) * u, the model's dense FFN activation (silu, or gemma3's gelu)
  Ref g, u, out;
  size_t n;
  model::Activation act = model::Activation::Silu;
};
struct ArgMax {  // advances the token, the generated run and the position by `rows`
  Ref logits;
  int rows;
};
struct GemvNorm {  // the projection, then the norm that adds its output to the residual (norm.add is gemv.y)
  Gemv gemv;
  AddNorm norm;
  // norm_fold: the decode step's spans of 128 values, each ended by its last block (norm_fold_groups: each 32-group by
  // its own block): the residual added, the copy norm.xq of x * w, unscaled, and each 32-group's sum of squares into
  // `spans`; norm.out is not written.
  std::optional<std::string> spans = std::nullopt;
};
struct GemvRope {  // the fused q/k/v projection, then rope with the cache append (rope.q, k and append.v are its
                   // outputs)
  GemvParts qkv;
  Rope rope;
};
// A mixture layer's route of each of `rows` rows from its router logits: its experts_used experts (`ids`, largest
// first, the lowest expert first among equals) and their weights, as the model's gating defines them; with a shared
// expert (`shared_w`, its gate's weights) also sigmoid(shared_w . x) of each row into `gate`.
struct MoeRoute {
  Ref logits;
  Ref ids, weights;
  std::optional<std::string> shared_w;
  Ref x;
  std::optional<Ref> gate;
  int rows;
};
// Where a chunk's (row, slot) pairs lie grouped by expert: each expert's count of pairs and its first position (the
// experts in order), the pair row * experts_used + slot at each position (its pairs ascending) and each pair's
// position (`at`).
struct ExpertGroups {
  Ref count, first, order, at;
};
// A chunk's pairs grouped by expert from their `ids` (one block), then the activation rows gathered into grouped
// order: xg[pos] = x[order[pos] / experts_used].
struct MoeGroup {
  Ref ids;
  ExpertGroups groups;
  Ref x, xg;
  int rows;
};
// The selected experts' gate and up projections paired: out[row][slot] = silu(G_e x[row]) * (U_e x[row]) for each
// row's slot's expert e (ids), read from e's rows of the 3-D tensors `wg` and `wu`. With `groups` (a chunk), x and
// out are in grouped order (x is MoeGroup's xg) and each expert's rows are read once a slab of its pairs.
// gpt-oss: each expert's gate and up biases ([experts][rows]) added to its sums, and the model's clamped SwiGLU.
// Under gemm_half a chunk's reads x's f16 copy `xq` (a QuantizeI8 of its pairs' rows) on the tensor cores
// (lk_moe_gemm_h) where gate and up share a format; under gemv_prequant the decode step's reads x's int8 copy `xq`
// (row by row, as a dense GEMV's).
struct MoeGlu {
  std::string wg, wu;
  Ref x, ids, out;
  int rows;
  std::optional<ExpertGroups> groups;
  std::optional<std::string> bg, bu;
  std::optional<std::string> xq;
};
// The selected experts' down projections: out[row][slot] = D_e x[row][slot] (+ e's row of `bias`); with `groups`, in
// grouped order (under gemm_half from x's f16 copy `xq`, as MoeGlu; the decode step's under gemv_prequant from the
// int8 copy of its pairs' rows).
struct MoeDown {
  std::string w;
  Ref x, ids, out;
  int rows;
  std::optional<ExpertGroups> groups;
  std::optional<std::string> bias;
  std::optional<std::string> xq;
};
// The mixture's output of each row: y = sum over its slots in order of weight * expert output (read at the pair's
// position `at` where the chunk's pairs were grouped) (+ gate * the shared expert's output); with `norm` (fuse_norm,
// its add is y) then the next layer's add + norm in the same launch.
struct MoeCombine {
  Ref expert_out, weights;
  std::optional<Ref> at, shared, gate;
  Ref y;
  int rows;
  std::optional<AddNorm> norm;
};
using Op = std::variant<Embed, AddNorm, Gemv, GemvParts, GemvGlu, GemvNorm, GemvRope, QuantizeI8, Rope, KvAppend,
                        Attention, Fold, SwiGlu, ArgMax, MoeRoute, MoeGroup, MoeGlu, MoeDown, MoeCombine>;

// One launch: its kernel's arguments, the buffers it reads and writes (for liveness and the tests), the names
// --profile prints for it, and its stream: 0 the step's, k > 0 the k-th side stream (side_streams). A launch on a side
// stream belongs to the group of independent launches that starts at the nearest launch before it on stream 0; the
// group forks from the step's stream before its first launch and joins it after its last.
struct Launch {
  Op op;
  std::vector<std::string> reads, writes;
  std::string kind, output;
  int stream = 0;
};

// A step-local buffer's place in the arena: its byte offset and size, and the launches it is live over.
struct Slot {
  size_t offset = 0, bytes = 0;
  int first = 0, last = 0;
};

// A form: the same layers over `rows` rows (1: the decode step).
struct Form {
  int rows = 1;
  std::vector<Launch> launches;
  std::map<std::string, Buffer> buffers;  // step-local
  std::map<std::string, Slot> slots;      // their arena places
  size_t arena_bytes = 0;
  std::string token;   // its token input
  std::string logits;  // the logits its arg-max reads
  // norm_fold: a quantized copy written unscaled -> its 32-groups' sums of squares (the projections reading the copy
  // scale their sums by the norm's 1 / rms from them).
  std::map<std::string, std::string> span_sums;
};

// The whole schedule of a lane.
struct Schedule {
  model::Model model;
  knobs::Knobs knobs;
  knobs::Target target;
  int ctx = 0;                   // positions the caches hold (knobs::lane_context)
  std::vector<Matrix> matrices;  // in the order they move to host memory under --device-bytes (largest first)
  std::vector<Vector> vectors;
  std::vector<SideArray> side;
  std::vector<uint8_t> sidecar;
  std::map<std::string, Buffer> carried;
  std::vector<Form> forms;  // decode first, then the chunks, largest first
  size_t arena_bytes = 0;   // the largest form's

  size_t act_bytes() const;         // sizeof(lk_act): 4, or 8 under precise numerics
  size_t elem_bytes(Elem e) const;  // an element's bytes (a q8_0 cache's: its int8 values')
  size_t bytes_of(const Buffer& b) const;
  const Matrix& matrix(const std::string& name) const;
};

// Words an activation takes in the int8 numerics' products: 0 (not int8), 1 (int8) or 2 (int8x2).
int int8_words(const knobs::Knobs& k);

// Whether a projection of `rows` activation rows over `w` runs on the tensor cores (lk_gemm_i8 and kin): a chunk of
// whole 16-row tiles, and the int8 numerics over a Q8_0 matrix or, under gemm_prequant, a block-format one; or
// under gemm_half (lk_gemm_h) any matrix but an f32 one.
bool on_tensor_cores(const knobs::Knobs& k, const Matrix& w, int rows);

// Whether a mixture's chunk of `rows` rows runs its experts' projections over `w` (and the up matrix `u`, paired with
// it) on the tensor cores in f16 (gemm_half, lk_moe_gemm_h): grouped pairs, a format both share.
bool experts_on_tensor_cores(const knobs::Knobs& k, const Matrix& w, const Matrix* u, int rows);

// Whether such a projection reads its activations from a quantized copy (a QuantizeI8 before it): gemm_prequant or
// gemm_half (an f16 copy) on the tensor cores, gemv_prequant in the decode step over a Q8_0 or block-format matrix
// under the int8 numerics.
bool quantized_input(const knobs::Knobs& k, const Matrix& w, int rows);

// gemm_half's GEMM (lk_gemm_h) over `w` (`glu`: paired with its up matrix) for `rows` activation rows, as measured on
// the H200 (bench/NOTES.md, sessions 13-14): the fused gate/up GEMM in blocks of 128 weight rows (64 of each) by 128
// activation rows (the most products a weight tile's unpacking feeds); the others 64 by 128, or by 64 where 128 would
// leave half the SMs without a block (and for chunks of 64 rows or fewer), then split along k where the grid is still
// small (lk_gemm_h_split: the slots one block an SM, two for the lighter 64x64 blocks; never beside side streams, whose
// launches would share the parts' workspace). A grid of gx by gy tiles, `split` blocks each.
struct HalfGemm {
  int bm = 0, bn = 0, split = 1;
  int wgs = 0, ks = 0;  // lk_gemm_w's (gemm_wgmma.cuh) warpgroups a block and k a stage; wgs 0: lk_gemm_h
  size_t gx = 0, gy = 0;
  size_t full = 0;  // the tiles not split (a grouped GEMM's whole waves; a launch's: all of them, or none)
  size_t split_tiles() const { return gx * gy - full; }
  size_t units() const { return full + split_tiles() * size_t(split); }  // (a grouped GEMM's blocks)
  size_t workspace() const { return split > 1 ? split_tiles() * size_t(split) * size_t(bm) * size_t(bn) : 0; }
};
HalfGemm half_gemm_shape(const Schedule& p, const Matrix& w, bool glu, int rows);
// The same for one launch over a group of matrices of one input and format (gemm_groups): one grid over their output
// tiles in order, lk_gemm_w's where the group has 4,096 rows, and only the tiles past its whole waves split along k
// (lk_gemm_tail_split).
HalfGemm half_gemm_shape(const Schedule& p, const std::vector<const Matrix*>& group, int rows);

// The launches a fused projection's parts take on the tensor cores: under gemm_half each run of parts in one format
// is one grouped GEMM (a chunk's q, k and v, or q and k beside a v of another format), otherwise a part a launch.
std::vector<std::vector<const Gemv*>> gemm_groups(const Schedule& p, const GemvParts& op);

// The 4-byte words of a QuantizeI8 buffer of `rows` rows of `k` under knobs `kn`: f16 values (`half`: gemm_half's
// copy), else the int8 numerics' words and scales.
size_t quantized_words(const knobs::Knobs& kn, int rows, size_t k, bool half);

// Schedules the lane; throws lt::Error for an unsupported tensor format or bad knobs.
Schedule schedule(const gguf::File& file, const model::Model& m, const knobs::Knobs& k, const knobs::Target& t);

// Sets the streams of a form's launches (side_streams): up to 3 independent launches side by side, a tailed one alone.
void assign_streams(Form& f);

// The launches [first, last] of the group launch `i` belongs to (itself alone when no side stream follows it).
std::pair<int, int> group_of(const Form& f, int i);

// Packs a form's step-local buffers into its arena by liveness (sets slots and arena_bytes); the launches of a group
// run side by side, so a buffer one of them uses is live over the whole group.
void pack_arena(Form& f, const Schedule& p);

}  // namespace lt::lane
