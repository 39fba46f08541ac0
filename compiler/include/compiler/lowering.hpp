// The lane's lowering: each launch of a schedule as the kernel calls it makes, as data. Which kernel and template
// arguments a launch runs, its grid, block and shared memory, and its parameters down to every pointer and number are
// decided here once; the printer (lane.cu, a release) and the lane image (what a resident host runs while tuning) only
// write them out, so the two run the same kernels with the same arguments.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/lane_schedule.hpp"

namespace lt::lane {

// Where a pointer parameter points: nowhere, a weight vector, a sidecar constant, carried state or a step buffer of
// the form, `offset` elements in.
struct Place {
  enum class Space { Null, Vector, Side, Carried, Step };
  Space space = Space::Null;
  std::string name;
  size_t offset = 0;
};

// A kernel parameter, or a member of one: a pointer (with the C cast the printer writes before it), a 32-bit integer,
// a float, a double, a weight matrix (its format's handle: an lk_q8's int8 rows and scales, or an lk_plain's
// elements), or an aggregate of members (a struct by value when `type` is set, else a brace list: an array member).
struct Arg {
  enum class Kind { Pointer, Int, Float, Double, Matrix, Aggregate };
  Kind kind = Kind::Int;
  Place place;         // Pointer
  std::string cast;    // Pointer: e.g. "(const int*)"
  int64_t i = 0;       // Int
  double f = 0;        // Float, Double
  std::string matrix;  // Matrix: the schedule's matrix name
  std::string type;    // Aggregate: its C type ("lk_rope_args"), empty for an array's brace list
  std::vector<Arg> members;

  static Arg pointer(Place p, std::string cast = {});
  static Arg null();
  static Arg integer(int64_t v);
  static Arg real(float v);
  static Arg dbl(double v);
  static Arg weights(std::string name);
  static Arg aggregate(std::string type, std::vector<Arg> members);
};

// A launch configuration's dimensions; `dims` says how the printer writes it (1: `x`, 2: `dim3(x, y)`, 3: all).
struct Dims {
  std::array<unsigned, 3> v = {1, 1, 1};
  int dims = 1;
};

// One kernel call: the kernel, its template arguments, its launch configuration and its parameters.
struct KernelCall {
  std::string kernel;              // "lk_gemv"
  std::vector<std::string> targs;  // {"lk_q8", "2", "1"}
  Dims grid, block;
  size_t smem = 0;  // dynamic shared memory bytes; past 48 KiB the kernel must be allowed it first
  std::vector<Arg> params;

  // The kernel's instance as C text: "lk_gemv<lk_q8, 2, 1>" (the kernel's name when it has no template arguments).
  std::string instance() const;
};

// The C type a matrix format's handle takes in the kernels: lk_q8, lk_plain<element> or lk_blk<LK_Q4_K>, ...
std::string format_type(ggml::Type t);
// A block format's name in the kernel library (kernels/shapes.cuh): "LK_Q4_K", "LK_MXFP4", ...
std::string block_macro(ggml::Type t);

// The dynamic shared memory an lk_attention block of `heads` query heads and `vper` value elements a lane takes
// under the lane's activation size (kernels/attention.cuh lays it out).
size_t attention_smem(size_t act_bytes, int heads, int vper);

// Whether the attention launches are lk_attention_lanes (a lane a position): attn_lanes, with key and value heads
// multiples of 8 wide (its loads take 8 cached values); else lk_attention.
bool lanes_attention(const knobs::Knobs& k, const model::Model& m);

// Whether an attention launch over `rows` rows is lk_attention_mma (the tensor cores, kernels/attention_mma.cuh):
// attn_mma 1 on a chunk (rows > 1), attn_mma 2 on every form; else the kernels above.
bool mma_attention(const knobs::Knobs& k, int rows);
// Whether lk_attention_mma over `rows` rows takes its STEP shape: at most 16 query rows (rows x the group), shared by
// the block's warps (lk_attention_mma_warps), each through its share of each tile.
bool mma_attention_step(const model::Model& m, int rows);
// Whether the decode step's attention, split over the positions, folds its splits itself: lk_attention_mma's STEP
// shape (a block a key/value head and split), where the block that finishes a head's last split merges them (no Fold
// launch; its count a head in attn_count), unless attn_fold_launch gives the fold a launch of its own.
bool folds_in_attention(const Schedule& p, int rows);

// The kernel calls launch `l` of form `f` makes, in order: one, or a chunk's GEMV in slabs of at most 8 rows, or the
// parts of a fused projection on the tensor cores one by one, or a fused launch's pieces where its fusion does not
// apply (chunks).
std::vector<KernelCall> lower(const Schedule& p, const Form& f, const Launch& l);

// The C name of a place as form `f` of schedule `p` prints it: a step buffer "f<rows>_<name>", carried state
// "s_<name>", anything else its own name; with an offset, "(<name> + <offset>)".
std::string c_place(const Schedule& p, const Form& f, const Place& place);

}  // namespace lt::lane
