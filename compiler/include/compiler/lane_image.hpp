// A lane image: one configuration's lane as data for a resident host (kernels/resident.cuh) that holds the
// checkpoint's weights on the GPU already and runs image after image over them while tuning. The image is the same
// schedule and the same lowering as the lane's program (lane.cu), so the two launch the same kernels with the same
// arguments; only the kernels' machine code comes from modules compiled once per kernel instance and cached.
//
// Text format (version 1), one record a line, words separated by spaces:
//   LANE_IMAGE 1
//   weights <xxh64 of the weights manifest's text, 16 hex digits>
//   act_bytes <4|8>  vocab <n>  ctx <n>  graphs <0|1>  side_streams <0|1>  pdl <0|1>   (one record a line each)
//   sidecar <bytes> <xxh64>
//   side <n>, then n lines: <name> <byte offset> <count>
//   carried <n>, then n lines: <name> <bytes>
//   arena <bytes>
//   kernels <n>, then n lines: <index> <smem bytes to allow> <symbol> <cubin path to the end of the line>
//   forms <n>, then for each form: form <rows> <token: carried index> <logits: arena byte offset> <launches>,
//     and for each launch: launch <stream> <fork> <join> <calls> <kind> <output>
//       (fork: side streams to fork before it; join: side streams to join after it; stream: 0 the step's, k the
//       k-th side stream), and for each call: call <kernel> <gx> <gy> <gz> <bx> <by> <bz> <smem> <params>,
//       and for each parameter: param <bytes> <align> <items> <item>... where an item is `i <offset> <int32>`,
//       `f <offset> <float bits>`, `d <offset> <double bits>` or `p <offset> <space> <index> <byte offset>` with
//       space n (null), q / s (a Q8_0 matrix's int8 rows / scales), q / h / s / d (a block format's planes,
//       kernels/shapes.cuh's lk_plane_bytes), w (a plain matrix), v (a vector),
//       S (a sidecar array), c (carried state) or a (the arena: index 0).
//
// The weights manifest (version 1), what a resident host uploads once for a checkpoint:
//   LANE_WEIGHTS 1
//   checkpoint <size> <data start> <digest of the header>
//   matrix <name> <format: ggml's name> <rows> <cols> <file offset>      (in the schedule's matrix order)
//   vector <name> <n> <file offset>                                      (in the schedule's vector order)
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/model.hpp"

namespace lt::lane {

inline constexpr int kImageVersion = 1;

// One configuration's image before its kernels are built: the kernel instances it calls (the records refer to them by
// index), the text of the rest, its sidecar and a description.
struct Image {
  std::string head;                  // what every kernel module of the image starts with (types, switches)
  std::vector<std::string> kernels;  // distinct kernel instances, e.g. "lk_gemv<lk_q8, 2, 1>"
  std::vector<size_t> smem;          // the dynamic shared memory each must be allowed past the default (0: none)
  std::string before_kernels;        // the records before the kernels' lines
  std::string after_kernels;         // the forms' records
  std::vector<uint8_t> sidecar;
  nlohmann::json description;
};

// A built kernel module: the cubin and the kernel's symbol in it.
struct Module {
  std::string path;
  std::string symbol;
};

// The image of the lane for `file` under `k` (checked against the space for `t`); throws lt::Error as compile() does.
Image image(const gguf::File& file, const model::Model& m, const knobs::Knobs& k, const knobs::Target& t);

// The source of the kernel module that holds `instance` (nvcc -cubin): the image's head, the kernel library, and the
// instance taken by address so that nvcc compiles it.
std::string module_source(const std::string& head, const std::string& instance);
// One module holding several instances, each compiled as in its own module (nvcc's fixed cost, reading the head and
// the library, ~1 s of a module's 1.5 s, paid once for them all): REQUIRES every instance's module_library is the same.
std::string shared_module_source(const std::string& head, const std::vector<std::string>& instances);
// The parts of the library a module of `instance` reads (the switches its source carries): instances with the same
// parts can share a module.
std::string module_library(const std::string& instance);

// Which of a module's kernels is each of `instances`: `symbols` are the module's kernels as (mangled, demangled) names;
// an instance is the kernel of its name whose template arguments begin with the instance's (the rest its template's
// defaults), spelled as the demangler spells them. "" for an instance that matches none or more than one: its module
// must be built alone (kernel_symbol then finds its one kernel).
std::vector<std::string> instance_symbols(const std::string& head, const std::vector<std::string>& instances,
                                          const std::vector<std::pair<std::string, std::string>>& symbols);

// The image's text once its kernels are built; REQUIRES: modules.size() == img.kernels.size().
std::string image_text(const Image& img, const std::vector<Module>& modules);

// The weights manifest of the checkpoint (the same for every configuration of the model).
std::string weights_manifest(const gguf::File& file, const model::Model& m);

// The resident host's program (kernels/resident.cuh with the host side of the library): built once per GPU
// architecture, it runs every image of every model.
std::string resident_source();

// The nvcc command lines that build a kernel module's cubin from `source` into `cubin`, and the resident host's
// program from `source` into `binary`, for sm_`arch`: the lane's own flags, so that a kernel compiles to the same
// machine code in a module as in a lane.
std::vector<std::string> nvcc_module_command(const std::string& source, const std::string& cubin, int arch);
std::vector<std::string> nvcc_resident_command(const std::string& source, const std::string& binary, int arch);

}  // namespace lt::lane
