// The lane's schedule printed as one CUDA program: the kernel library it uses, its constants, its uploads, its arena,
// and each form's step as launches; and beside it the host runtime it calls (kernels/host_api.cuh), lane_host.cu.
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "compiler/error.hpp"
#include "compiler/lane.hpp"
#include "compiler/lane_output.hpp"
#include "compiler/lane_schedule.hpp"
#include "compiler/lowering.hpp"
#include "compiler/version.hpp"
#include "kernels/embedded.hpp"
#include "kernels/shapes.cuh"
#include "program.hpp"

namespace lt::lane {

namespace {

// The launches a step's function holds: nvcc's host compiler slows down sharply on one function of hundreds (82 s
// against 15 s for qwen3-0.6b's lane).
constexpr size_t kLaunchesPerFunction = 24;

// The kernel library's device files, in the order a program includes them: its kernels, and a kernel module's.
const char* const kDevice[] = {
    "prelude.cuh",    "shapes.cuh",    "async.cuh",         "formats.cuh", "embed.cuh",       "norm.cuh",
    "kv.cuh",         "rope.cuh",      "gemv.cuh",          "gemm.cuh",    "gemm_blocks.cuh", "gemm_half.cuh",
    "gemm_wgmma.cuh", "attention.cuh", "attention_mma.cuh", "swiglu.cuh",  "argmax.cuh",      "moe.cuh"};
// What a lane's program adds to its kernels to call the host runtime: the exit codes, the runtime's interface, the
// uploads by format.
const char* const kProgramHost[] = {"exits.cuh", "host_api.cuh", "upload.cuh"};
// The host runtime, in order: what a lane compiles apart (lane_host.cu) and the resident host compiles in its file.
const char* const kRuntime[] = {"exits.cuh", "shapes.cuh",      "xxh64.cuh",        "stall.cuh",      "host_api.cuh",
                                "host.cuh",  "host_memory.cuh", "host_profile.cuh", "host_clock.cuh", "host_drive.cuh"};

// The named library files, each after a line that names it.
template <size_t N>
std::string library_files(const char* const (&files)[N]) {
  std::string s;
  for (const char* f : files) s += std::string("// ---- kernels/") + f + "\n" + std::string(kernels::source(f)) + "\n";
  return s;
}

// The element type of a plain matrix format.
std::string plain_elem(ggml::Type t) {
  return t == ggml::Type::F16 ? "__half" : t == ggml::Type::BF16 ? "__nv_bfloat16" : "float";
}

std::string flit(double v) {
  std::ostringstream o;
  o.precision(9);
  o << std::scientific << static_cast<float>(v) << "f";
  return o.str();
}

// A double as a C literal that reads back to the same double (the attention's scale: 1/sqrt(128) rounded to f32 is
// off by 3e-8, the precise lane's whole error on such heads).
std::string dlit(double v) {
  std::ostringstream o;
  o.precision(17);
  o << std::scientific << v;
  return o.str();
}

// A kernel parameter as C text.
std::string print_arg(const Arg& a, const Schedule& p, const Form& f) {
  switch (a.kind) {
    case Arg::Kind::Pointer:
      return a.cast + c_place(p, f, a.place);
    case Arg::Kind::Int:
      return std::to_string(a.i);
    case Arg::Kind::Float:
      return flit(a.f);
    case Arg::Kind::Double:
      return dlit(a.f);
    case Arg::Kind::Matrix:
      return a.matrix;
    case Arg::Kind::Aggregate: {
      std::string s = a.type + "{";
      for (size_t i = 0; i < a.members.size(); ++i) s += (i ? ", " : "") + print_arg(a.members[i], p, f);
      return s + "}";
    }
  }
  return {};
}

// A launch configuration's dimensions as C text; `dim3` forces the dim3(...) form.
std::string print_dims(const Dims& d, bool dim3) {
  if (d.dims == 1 && !dim3) return std::to_string(d.v[0]);
  std::string s = "dim3(";
  for (int i = 0; i < d.dims; ++i) s += (i ? ", " : "") + std::to_string(d.v[i]);
  return s + ")";
}

// One kernel call as a statement: `kernel<<<grid, block, smem, st>>>(args);`, or under programmatic dependent launch
// `lk_launch(kernel, grid, block, smem, st, args);`.
std::string print_call(const KernelCall& c, const Schedule& p, const Form& f) {
  std::string args;
  for (size_t i = 0; i < c.params.size(); ++i) args += (i ? ", " : "") + print_arg(c.params[i], p, f);
  if (p.knobs.pdl)
    return "lk_launch(" + c.instance() + ", " + print_dims(c.grid, true) + ", " + print_dims(c.block, true) + ", " +
           std::to_string(c.smem) + ", st, " + args + ");";
  return c.instance() + "<<<" + print_dims(c.grid, false) + ", " + print_dims(c.block, false) + ", " +
         std::to_string(c.smem) + ", st>>>(" + args + ");";
}

// The statements of one launch's calls.
std::string print_launch(const std::vector<KernelCall>& calls, const Schedule& p, const Form& f) {
  std::string s;
  for (size_t i = 0; i < calls.size(); ++i) s += (i ? "\n  " : "") + print_call(calls[i], p, f);
  return s;
}

std::string c_type(const Schedule& p, Elem e) {
  if (e == Elem::Int) return "int";
  if (e == Elem::Kv) return "lk_kv";
  return p.act_bytes() == 8 ? "double" : "float";
}

size_t rounded(size_t n) {
  return (n + 255) / 256 * 256;
}

}  // namespace

size_t fixed_bytes(const Schedule& p) {
  size_t fixed = 0;
  for (const Vector& v : p.vectors) fixed += rounded(v.n * 4);
  for (const SideArray& s : p.side) fixed += rounded(s.count * p.act_bytes());
  for (const auto& [name, b] : p.carried) fixed += rounded(p.bytes_of(b));
  return fixed + rounded(p.arena_bytes);
}

std::vector<std::pair<std::string, size_t>> large_smem(const std::vector<std::vector<std::vector<KernelCall>>>& calls) {
  std::vector<std::pair<std::string, size_t>> out;
  for (const auto& form : calls)
    for (const auto& launch : form)
      for (const KernelCall& c : launch) {
        if (c.smem <= 48 * 1024) continue;
        auto it = std::find_if(out.begin(), out.end(), [&](auto& e) { return e.first == c.instance(); });
        if (it == out.end())
          out.push_back({c.instance(), c.smem});
        else
          it->second = std::max(it->second, c.smem);
      }
  return out;
}

namespace {

// A float as a C++ literal that reads back as the same float (hexadecimal: exact).
std::string float_literal(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%af", double(v));
  return buf;
}

}  // namespace

std::string module_head(const knobs::Knobs& k, const model::Model* m) {
  const char* act = k.numerics == knobs::Numerics::Precise ? "double" : "float";
  const bool gelu = m && m->ffn_act == model::Activation::Gelu;
  std::ostringstream o;
  o << "#include <climits>\n#include <cstdint>\n#include <type_traits>\n#include <cuda_fp16.h>\n#include "
       "<cuda_bf16.h>\n\n"
    << "typedef " << act << " lk_act;\n"
    << "typedef " << act << " lk_acc;\n"
    << "#define LK_INT8 " << int8_words(k) << "\n"
    << "#define LK_KV " << static_cast<int>(k.kv_cache) << "\n"
    << (k.pdl_first ? "#define LK_PDL_FIRST 3\n" : "")  // (else prelude.cuh's 0, or a bench's -D)
    << (gelu ? "#define LK_GELU 1\n" : "");
  if (m && m->attn_softcap != 0.f) o << "#define LK_ATTN_SOFTCAP " << float_literal(m->attn_softcap) << "\n";
  if (m && m->final_softcap != 0.f) o << "#define LK_FINAL_SOFTCAP " << float_literal(m->final_softcap) << "\n";
  o << "\n";
  return o.str();
}

std::string program_head(const knobs::Knobs& k, const model::Model* m) {
  return "#include <algorithm>\n#include <cerrno>\n#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n"
         "#include <cstring>\n#include <functional>\n#include <string>\n#include <vector>\n#include <fcntl.h>\n"
         "#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n#include <cuda_runtime.h>\n" +
         module_head(k, m);
}

void LibraryParts::need(const std::string& instance) {
  // (a block-format kernel names its matrices' type, lk_blk<..>, or its format alone: lk_gemm_i8qb<LK_Q4_K, ..>)
  blocks |= instance.find("lk_blk<") != std::string::npos || instance.rfind("lk_gemm_i8qb<", 0) == 0 ||
            instance.rfind("lk_gemm_i8tb<", 0) == 0 || instance.rfind("lk_gemv_glu_group<", 0) == 0;
  mma |= instance.rfind("lk_gemm_i8", 0) == 0;
  gemm_tile |= instance.rfind("lk_gemm_i8t<", 0) == 0 || instance.rfind("lk_gemm_i8tb<", 0) == 0;
  attn_mma |= instance.rfind("lk_attention_mma<", 0) == 0;
  gemm_half |= instance.rfind("lk_gemm_h<", 0) == 0 || instance.rfind("lk_moe_gemm_h<", 0) == 0 ||
               instance.rfind("lk_gemm_w<", 0) == 0 || instance.rfind("lk_gemm_h_parts<", 0) == 0 ||
               instance.rfind("lk_gemm_w_parts<", 0) == 0;
}

std::string LibraryParts::switches() const {
  return std::string("#define LK_WITH_BLOCKS ") + (blocks ? "1" : "0") + "\n#define LK_WITH_MMA " + (mma ? "1" : "0") +
         "\n#define LK_WITH_GEMM_TILE " + (gemm_tile ? "1" : "0") + "\n#define LK_WITH_ATTN_MMA " +
         (attn_mma ? "1" : "0") + "\n#define LK_WITH_GEMM_HALF " + (gemm_half ? "1" : "0") + "\n\n";
}

std::string device_library() {
  return library_files(kDevice);
}

std::string resident_library() {
  return library_files(kDevice) + library_files(kRuntime);
}

std::string runtime_source() {
  return "// The host runtime of a lane built by lane-tune (kernels/host_api.cuh): the same file for every\n"
         "// lane, compiled apart once and linked into each lane's program (lane.cu).\n"
         "#include <algorithm>\n#include <cerrno>\n#include <climits>\n#include <cstdint>\n#include <cstdio>\n"
         "#include <cstdlib>\n#include <cstring>\n#include <functional>\n#include <string>\n#include <vector>\n"
         "#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n"
         "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n\n" +
         library_files(kRuntime);
}

Program compile(const gguf::File& file, const model::Model& m, const knobs::Knobs& k, const knobs::Target& t) {
  const Schedule p = schedule(file, m, k, t);
  // Every launch's kernel calls, [form][launch].
  std::vector<std::vector<std::vector<KernelCall>>> calls;
  for (const Form& f : p.forms) {
    calls.emplace_back();
    for (const Launch& l : f.launches) calls.back().push_back(lower(p, f, l));
  }
  std::ostringstream cu;
  cu << "// A lane compiled by lane-tune " << version() << " for " << m.name << " (" << m.architecture << ", "
     << m.layers << " layers) under the knobs " << k.key() << ".\n"
     << "// Run: lane <checkpoint.gguf> <sidecar> <n_gen> [--logits FILE] TOKEN... (see lane-tune's design.md).\n"
     << "// Built with its host runtime, " << kRuntimeSource << " (lane-tune's lane::build_commands).\n"
     << program_head(k, &m);
  LibraryParts parts;
  for (const auto& form : calls)
    for (const auto& launch : form)
      for (const KernelCall& c : launch) parts.need(c.instance());
  cu << parts.switches() << library_files(kDevice) << library_files(kProgramHost);

  // Constants: the checkpoint, the sidecar, the shapes, the residence order.
  const uint64_t side_digest = XXH64(p.sidecar.data(), p.sidecar.size(), 0);
  const size_t fixed = fixed_bytes(p);
  cu << "// ---- the lane\n"
     << "static const uint64_t CKPT_SIZE = " << file.size() << "ULL, CKPT_DATA = " << file.data_start()
     << "ULL, CKPT_DIGEST = " << file.digest() << "ULL;\n"
     << "static const uint64_t SIDECAR_BYTES = " << p.sidecar.size() << "ULL, SIDECAR_DIGEST = " << side_digest
     << "ULL;\n"
     << "static const int CTX = " << p.ctx << ", VOCAB = " << m.vocab << ";\n"
     << "static const bool GRAPHS = " << (k.cuda_graphs ? "true" : "false") << ";\n"
     << "static const size_t LK_FIXED = " << fixed << "UL;\n"
     << "static const size_t LK_ORDER[] = {";
  for (size_t i = 0; i < p.matrices.size(); ++i) cu << (i ? ", " : "") << p.matrices[i].device_bytes() << "UL";
  cu << "};\n\n";

  // Every array the steps use, at file scope so that each step's launches can sit in small functions.
  std::ostringstream globals;
  for (const Matrix& w : p.matrices) globals << "static " << format_type(w.type) << " " << w.name << ";\n";
  for (const Vector& v : p.vectors) globals << "static const float* " << v.name << ";\n";
  for (const SideArray& s : p.side) globals << "static const lk_act* " << s.name << ";\n";
  for (const auto& [name, b] : p.carried) globals << "static " << c_type(p, b.elem) << "* s_" << name << ";\n";
  for (const Form& f : p.forms) {
    for (const auto& [name, slot] : f.slots) {
      const Elem e = f.buffers.at(name).elem;
      globals << "static " << (e == Elem::Acc ? "lk_acc" : c_type(p, e)) << "* "
              << c_place(p, f, Place{Place::Space::Step, name, 0}) << ";\n";
    }
  }
  cu << globals.str() << "\n";
  // Each form's launches in functions of at most a layer's worth, each launch after the hook that records its
  // --profile event and, under --stagger, its stall.
  for (size_t fi = 0; fi < p.forms.size(); ++fi) {
    const Form& f = p.forms[fi];
    const size_t per = kLaunchesPerFunction;
    for (size_t at = 0, part = 0; at < f.launches.size(); at += per, ++part) {
      cu << "static void step" << f.rows << "_" << part << "(cudaStream_t st, const cudaEvent_t* ev) {\n";
      for (size_t i = at; i < std::min(f.launches.size(), at + per); ++i) {
        // A group of independent launches (side_streams): the fork before its first, each side launch in a scope
        // whose `st` is its side stream, the join after its last.
        const auto [first, last] = group_of(f, int(i));
        int sides = 0;
        for (int j = first; j <= last; ++j) sides = std::max(sides, f.launches[j].stream);
        if (sides && int(i) == first) cu << "  lk_fork(st, " << sides << ");\n";
        const int side = f.launches[i].stream;
        const std::string body = "lk_before(st, ev, " + std::to_string(f.rows) + ", " + std::to_string(i) + ");\n  " +
                                 print_launch(calls[fi][i], p, f);
        if (side)
          cu << "  {\n  cudaStream_t st = lk_side[" << side - 1 << "];\n  " << body << "\n  }\n";
        else
          cu << "  " << body << "\n";
        if (sides && int(i) == last) cu << "  lk_join(st, " << sides << ");\n";
      }
      cu << "}\n";
    }
  }
  cu << "\n";

  cu << "int main(int argc, char** argv) {\n"
     << "  setenv(\"CUDA_MODULE_LOADING\", \"EAGER\", 0);  // (every kernel loaded at start, unless the caller says)\n"
     << "  lk_args a;\n"
     << "  if (int e = lk_parse_args(argc, argv, a, VOCAB, CTX); e >= 0) return e;\n"
     << "  const uint8_t* file = lk_open_checkpoint(a.checkpoint, CKPT_SIZE, CKPT_DATA, CKPT_DIGEST);\n"
     << "  const std::vector<uint8_t> side = lk_read_sidecar(a.sidecar, SIDECAR_BYTES, SIDECAR_DIGEST);\n"
     << "  const int moved = lk_place(a.device_bytes, LK_FIXED, LK_ORDER, " << p.matrices.size() << ");\n";
  // The weights, straight from the mapped checkpoint; matrix i moves to the host when i < moved.
  for (size_t i = 0; i < p.matrices.size(); ++i) {
    const Matrix& w = p.matrices[i];
    const uint64_t off = file.data_start() + w.tensor->offset;
    const std::string host = "moved > " + std::to_string(i);
    if (w.type == ggml::Type::Q8_0)
      cu << "  " << w.name << " = lk_upload_q8(file, " << off << "ULL, " << w.rows << ", " << w.cols << ", " << host
         << ");\n";
    else if (lk_is_block(int(w.type)))
      cu << "  " << w.name << " = lk_upload_blocks<" << block_macro(w.type) << ">(file, " << off << "ULL, " << w.rows
         << ", " << w.cols << ", " << host << ");\n";
    else
      cu << "  " << w.name << " = lk_upload_plain<" << plain_elem(w.type) << ">(file, " << off << "ULL, " << w.rows
         << ", " << w.cols << ", " << host << ");\n";
  }
  cu << "  lk_planes_done();\n";
  for (const Vector& v : p.vectors)
    cu << "  " << v.name << " = lk_upload_f32(file, " << file.data_start() + v.tensor->offset << "ULL, " << v.n
       << ");\n";
  for (const SideArray& s : p.side)
    cu << "  " << s.name << " = lk_upload_side(side, " << s.offset << ", " << s.count << ");\n";
  for (const auto& [name, b] : p.carried)
    if (b.elem == Elem::Kv)  // (a q8_0 cache's scales follow its values: its bytes, not its elements)
      cu << "  s_" << name << " = (lk_kv*)lk_zeroed<unsigned char>(" << p.bytes_of(b) << ");\n";
    else
      cu << "  s_" << name << " = lk_zeroed<" << c_type(p, b.elem) << ">(" << b.count << ");\n";
  // The arena, poisoned so that a read of a byte no launch of the step wrote is a NaN.
  cu << "  unsigned char* arena = lk_carve<unsigned char>(" << p.arena_bytes << ", false);\n"
     << "  CK(cudaMemset(arena, 0xff, " << p.arena_bytes << "));\n";
  for (const Form& f : p.forms) {
    for (const auto& [name, slot] : f.slots) {
      const Elem e = f.buffers.at(name).elem;
      const std::string ct = e == Elem::Acc ? "lk_acc" : c_type(p, e);
      cu << "  " << c_place(p, f, Place{Place::Space::Step, name, 0}) << " = (" << ct << "*)(arena + " << slot.offset
         << ");\n";
    }
  }
  cu << "  if (lk_pool_at != lk_pool_bytes || lk_hpool_at != lk_hpool_bytes) {\n"
     << "    fprintf(stderr, \"the program allocates %zu of its %zu pooled device bytes and %zu of its %zu host "
        "bytes\\n\", lk_pool_at, lk_pool_bytes, lk_hpool_at, lk_hpool_bytes);\n"
     << "    return LK_EXIT_ACCOUNTING;\n  }\n"
     << "  printf(\"LANE_CONTRACT: " << kContractVersion
     << "\\nDEVICE_BYTES: %zu\\nHOST_BYTES: %zu\\nMOVED: %d\\n\", lk_pool_bytes, lk_hpool_bytes, moved);\n";
  // Kernels that take more than 48 KB of shared memory.
  for (const auto& [instance, smem] : large_smem(calls))
    cu << "  CK(cudaFuncSetAttribute(" << instance << ", cudaFuncAttributeMaxDynamicSharedMemorySize, " << smem
       << "));\n";

  cu << "  lk_stagger = a.stagger;\n  lk_seed = a.seed;\n  std::vector<lk_form> forms;\n";
  if (k.side_streams) cu << "  lk_side_init();\n";
  nlohmann::json forms_json = nlohmann::json::array();
  for (size_t fi = 0; fi < p.forms.size(); ++fi) {
    const Form& f = p.forms[fi];
    cu << "  forms.push_back(lk_form{" << f.rows << ", [](cudaStream_t st, const cudaEvent_t* ev) {\n";
    std::ostringstream kinds, outs, kernels;
    for (size_t i = 0; i < f.launches.size(); ++i) {
      kinds << (i ? ", " : "") << '"' << f.launches[i].kind << '"';
      outs << (i ? ", " : "") << '"' << f.launches[i].output << '"';
      kernels << (i ? ", " : "") << calls[fi][i].size();
    }
    for (size_t part = 0; part * kLaunchesPerFunction < f.launches.size(); ++part)
      cu << "    step" << f.rows << "_" << part << "(st, ev);\n";
    cu << "    lk_after(st, ev, " << f.launches.size() << ");\n"
       << "  }, " << c_place(p, f, Place{Place::Space::Carried, f.token, 0}) << ", "
       << c_place(p, f, Place{Place::Space::Step, f.logits, 0}) << ", {" << kinds.str() << "}, {" << outs.str()
       << "}, {" << kernels.str() << "}});\n";
    forms_json.push_back({{"rows", f.rows}, {"launches", f.launches.size()}, {"arena_bytes", f.arena_bytes}});
  }
  cu << "  const lk_state state{s_pos, s_tok, s_gen, s_count, s_prompt, VOCAB, CTX, (int)sizeof(lk_act)};\n"
     << "  return lk_drive(a, forms, state, GRAPHS);\n}\n";

  Program prog;
  prog.cu = cu.str();
  prog.runtime = runtime_source();
  prog.sidecar = p.sidecar;
  prog.description = {
      {"model", m.name},
      {"architecture", m.architecture},
      {"knobs", k.to_json()},
      {"judge", knobs::to_json(knobs::tolerance(k))},
      {"target", {{"sms", t.sms}, {"arch", t.arch}}},
      {"context", p.ctx},
      {"vocab", m.vocab},
      {"forms", forms_json},
      {"arena_bytes", p.arena_bytes},
      {"fixed_bytes", fixed},
      {"checkpoint", {{"size", file.size()}, {"data_start", file.data_start()}, {"digest", file.digest()}}},
      {"contract", kContractVersion},
      {"lane_tune", version()}};
  return prog;
}

}  // namespace lt::lane
