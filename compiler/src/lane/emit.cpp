// The lane's plan printed as one CUDA program: the kernel library it uses, its constants, its uploads, its arena,
// and each form's step as launches; the host side lives in kernels/host.cuh.
#include <xxhash.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "compiler/error.hpp"
#include "compiler/lane.hpp"
#include "compiler/lane_output.hpp"
#include "compiler/lane_plan.hpp"
#include "compiler/version.hpp"
#include "kernels/embedded.hpp"

namespace lt::lane {

namespace {

size_t cdiv(size_t a, size_t b) {
  return (a + b - 1) / b;
}

// The launches a step's function holds: nvcc's host compiler slows down sharply on one function of hundreds (82 s
// against 15 s for qwen3-0.6b's lane).
constexpr size_t kLaunchesPerFunction = 24;

// The kernel library files every lane includes, in order.
const char* const kLibrary[] = {"prelude.cuh", "stall.cuh",  "formats.cuh", "embed.cuh", "norm.cuh",
                                "rope.cuh",    "gemv.cuh",   "gemm.cuh",    "kv.cuh",    "attention.cuh",
                                "swiglu.cuh",  "argmax.cuh", "xxh64.cuh",   "host.cuh"};

// The C type a matrix format's handle takes in the kernels, and the elements of its 16-byte unit.
std::string format_type(ggml::Type t) {
  switch (t) {
    case ggml::Type::Q8_0:
      return "lk_q8";
    case ggml::Type::F16:
      return "lk_plain<__half>";
    case ggml::Type::BF16:
      return "lk_plain<__nv_bfloat16>";
    default:
      return "lk_plain<float>";
  }
}
// The element type of a plain matrix format.
std::string plain_elem(ggml::Type t) {
  return t == ggml::Type::F16 ? "__half" : t == ggml::Type::BF16 ? "__nv_bfloat16" : "float";
}
int unit_elems(ggml::Type t) {
  return t == ggml::Type::Q8_0 ? 16 : t == ggml::Type::F32 ? 4 : 8;
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

// A GEMV-like launch over `rows` activation rows, a launch a slab of at most 8 (the kernels' R): `one(at, r)` prints
// the slab of r rows from row `at`.
template <class F>
void slabs(std::ostream& o, int rows, F one) {
  for (int at = 0; at < rows; at += 8) {
    if (at) o << "\n  ";
    one(at, std::min(8, rows - at));
  }
}

// How one form names its buffers in C: its own under its rows' tag, the carried state and the weights once.
class Names {
 public:
  Names(const Plan& p, const Form& f) : p_(p), f_(f) {}
  std::string operator()(const Ref& r) const {
    std::string base = name(r.buf);
    return r.offset ? "(" + base + " + " + std::to_string(r.offset) + ")" : base;
  }
  std::string name(const std::string& buf) const {
    if (f_.buffers.count(buf)) return "f" + std::to_string(f_.rows) + "_" + buf;
    if (p_.carried.count(buf)) return "s_" + buf;
    return buf;
  }

 private:
  const Plan& p_;
  const Form& f_;
};

// Threads of a norm block over a row of d.
int norm_threads(size_t d) {
  return d <= 1024 ? 256 : d <= 4096 ? 512 : 1024;
}

// One tensor-core GEMM launch: y = W x (+ bias), or with `u` y = silu(W x) * (U x), over all `rows` rows at once:
// lk_gemm_i8 (x quantized as the block stages it, a warp 8 output rows), or with `xq` lk_gemm_i8q (x quantized
// before; a warp 16 output rows and TN groups of 8 activation rows, TN the largest of 4, 2, 1 that still gives the GPU
// 4 warps an SM).
void gemm(std::ostream& o, const Plan& p, const Matrix& w, const Matrix* u, const std::string& x,
          const std::string& bias, const std::string& y, int rows, const std::string& xq) {
  const char* glu = u ? "true" : "false";
  const std::string tail = ", " + bias + ", " + y + ", " + std::to_string(w.cols) + ", " + std::to_string(w.rows);
  const std::string mats = w.name + ", " + (u ? u->name : w.name) + ", ";
  if (xq.empty()) {
    const int warps = p.knobs.gemm_rows / 8;
    o << "lk_gemm_i8<" << rows << ", " << glu << "><<<" << cdiv(w.rows, size_t(8 * warps)) << ", " << 32 * warps
      << ", 0, st>>>(" << mats << x << tail << ");";
    return;
  }
  const int warps = p.knobs.gemm_rows / 16;
  int tn = 4;
  while (tn > 1 && (rows % (8 * tn) || cdiv(w.rows, 16) * size_t(rows / (8 * tn)) < size_t(4 * p.target.sms))) tn /= 2;
  o << "lk_gemm_i8q<" << glu << ", " << tn << "><<<dim3(" << cdiv(w.rows, size_t(16 * warps)) << ", " << rows / (8 * tn)
    << "), " << 32 * warps << ", 0, st>>>(" << mats << "(const int*)" << xq << tail << ", " << rows << ");";
}

// A launch statement `kernel<<<grid, block, smem, st>>>(args);` as lk_launch(kernel, dim3(grid), dim3(block), smem,
// st, args); for programmatic dependent launch (one statement a line).
std::string with_pdl(const std::string& statements) {
  std::string out;
  std::istringstream lines(statements);
  std::string s;
  while (std::getline(lines, s)) {
    const size_t open = s.find("<<<"), close = s.find(">>>(");
    if (!out.empty()) out += "\n";
    if (open == std::string::npos || close == std::string::npos) {
      out += s;
      continue;
    }
    std::vector<std::string> cfg(1);  // the launch configuration split at its top-level commas
    int depth = 0;
    for (size_t i = open + 3; i < close; ++i) {
      const char c = s[i];
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (c == ',' && depth == 0)
        cfg.emplace_back();
      else
        cfg.back() += c;
    }
    const size_t lead = s.find_first_not_of(' ');
    const std::string args = s.substr(close + 4);  // "args);"
    out += s.substr(0, lead) + "lk_launch(" + s.substr(lead, open - lead) + ", dim3(" + cfg.at(0) + "), dim3(" +
           cfg.at(1) + ")," + cfg.at(2) + "," + cfg.at(3) + (args == ");" ? "" : ", ") + args;
  }
  return out;
}

// Rope's arguments for `op` (an lk_rope_args).
std::string rope_args(const Rope& op, const Plan& p, const Names& n) {
  const model::Model& m = p.model;
  const bool append = op.append.has_value();
  std::ostringstream o;
  o << "lk_rope_args{" << n(op.q) << ", " << n(op.k) << ", " << op.qn.value_or("nullptr") << ", "
    << op.kn.value_or("nullptr") << ", c_rope_cos, c_rope_sin, s_pos, " << m.heads << ", " << m.kv_heads << ", "
    << m.head_dim << ", " << flit(m.norm_eps) << ", " << (append ? n(op.append->v) : "nullptr") << ", "
    << (append ? n.name(op.append->kc) : "nullptr") << ", " << (append ? n.name(op.append->vc) : "nullptr") << ", "
    << m.value_dim << ", " << p.ctx << "}";
  return o.str();
}
// Rope's kernels' first template arguments: <NEOX, NORM>.
std::string rope_mode(const Rope& op, const model::Model& m) {
  return std::string(m.rope_mode == model::RopeMode::Neox ? "true" : "false") + ", " + (op.qn ? "true" : "false");
}
// The pairs a lane of rope's warp takes.
size_t rope_pairs(const model::Model& m) {
  return cdiv(m.head_dim / 2, 32);
}

// A GEMV's input as its kernel takes it: x, or under gemv_prequant the quantized copy (an lk_xq, the kernel's last
// template argument): {the template argument, or nothing; the argument}.
std::pair<std::string, std::string> gemv_input(const std::optional<std::string>& xq, const Names& n, const Ref& x) {
  if (!xq) return {"", n(x)};
  return {", lk_xq", "lk_xq{(const int*)" + n.name(*xq) + "}"};
}

// A fused projection's statement over the slab of `r` rows from row `at`: lk_gemv_parts, or with `rope` (the rope's
// template arguments and its lk_rope_args) lk_gemv_parts_rope.
std::string parts_statement(const GemvParts& op, const Plan& p, const Names& n, int at, int r,
                            const std::pair<std::string, std::string>* rope) {
  const knobs::Knobs& k = p.knobs;
  const Matrix& w0 = p.matrix(op.parts[0].w);
  const int rpw = k.gemv_rows_per_warp, warps = k.gemv_warps;
  size_t total = 0;
  for (const Gemv& g : op.parts) total += p.matrix(g.w).rows;
  std::ostringstream ms, bs, ys, ns, o;
  for (size_t i = 0; i < 3; ++i) {
    const bool real = i < op.parts.size();
    const Gemv& g = op.parts[real ? i : 0];
    const Matrix& w = p.matrix(g.w);
    Ref y = g.y;
    y.offset += size_t(at) * w.rows;
    ms << (i ? ", " : "") << w.name;
    bs << (i ? ", " : "") << (real && g.bias ? *g.bias : "nullptr");
    ys << (i ? ", " : "") << (real ? n(y) : "nullptr");
    ns << (i ? ", " : "") << (real ? w.rows : 0);
  }
  Ref x = op.x;
  x.offset += size_t(at) * w0.cols;
  const auto [xt, xa] = gemv_input(op.xq, n, x);
  o << (rope ? "lk_gemv_parts_rope<" : "lk_gemv_parts<") << format_type(w0.type) << ", " << rpw << ", " << r
    << (rope ? ", " + rope->first : "") << xt << "><<<" << cdiv(total, size_t(warps) * rpw) << ", " << 32 * warps
    << ", 0, st>>>(lk_parts<" << format_type(w0.type) << ">{{" << ms.str() << "}, {" << bs.str() << "}, {" << ys.str()
    << "}, {" << ns.str() << "}}, " << xa << ", " << w0.cols << (rope ? ", " + rope->second : "") << ");";
  return o.str();
}

// The launch statements of one launch.
std::string launch(const Launch& l, const Plan& p, const Names& n) {
  const model::Model& m = p.model;
  std::ostringstream o;
  const knobs::Knobs& k = p.knobs;
  std::visit(
      [&](const auto& op) {
        using T = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<T, Embed>) {
          const Matrix& w = p.matrix(op.table);
          o << "lk_embed<" << format_type(w.type) << "><<<dim3(" << cdiv(m.d_model / unit_elems(w.type), 256) << ", "
            << op.rows << "), 256, 0, st>>>(" << w.name << ", " << n(op.tok) << ", " << n(op.out) << ", " << m.d_model
            << ");";
        } else if constexpr (std::is_same_v<T, AddNorm>) {
          o << "lk_add_rmsnorm<" << (op.add ? "true" : "false") << "><<<" << op.rows << ", " << norm_threads(m.d_model)
            << ", 0, st>>>(" << n(op.x) << ", " << (op.add ? n(*op.add) : "nullptr") << ", " << op.w << ", "
            << n(op.out) << ", " << m.d_model << ", " << flit(m.norm_eps) << ");";
        } else if constexpr (std::is_same_v<T, Gemv>) {
          const Matrix& w = p.matrix(op.w);
          const int rpw = k.gemv_rows_per_warp, warps = k.gemv_warps;
          if (on_tensor_cores(k, w, op.rows))
            return gemm(o, p, w, nullptr, n(op.x), op.bias.value_or("nullptr"), n(op.y), op.rows,
                        op.xq ? n.name(*op.xq) : "");
          slabs(o, op.rows, [&](int at, int r) {
            Ref x = op.x, y = op.y;
            x.offset += size_t(at) * w.cols;
            y.offset += size_t(at) * w.rows;
            const int split = k.gemv_split;
            const auto [xt, xa] = gemv_input(op.xq, n, x);
            if (split > 1)
              o << "lk_gemv_split<" << format_type(w.type) << ", " << rpw << ", " << r << ", " << split << xt << "><<<"
                << cdiv(w.rows, size_t(warps / split) * rpw);
            else
              o << "lk_gemv<" << format_type(w.type) << ", " << rpw << ", " << r << xt << "><<<"
                << cdiv(w.rows, size_t(warps) * rpw);
            o << ", " << 32 * warps << ", 0, st>>>(" << w.name << ", " << xa << ", " << (op.bias ? *op.bias : "nullptr")
              << ", " << n(y) << ", " << w.cols << ", " << w.rows << ");";
          });
        } else if constexpr (std::is_same_v<T, GemvParts>) {
          const Matrix& w0 = p.matrix(op.parts[0].w);
          if (on_tensor_cores(k, w0, op.rows)) {  // on the tensor cores a part a launch: each fills the GPU alone
            for (size_t i = 0; i < op.parts.size(); ++i) {
              const Gemv& g = op.parts[i];
              if (i) o << "\n  ";
              gemm(o, p, p.matrix(g.w), nullptr, n(op.x), g.bias.value_or("nullptr"), n(g.y), op.rows,
                   op.xq ? n.name(*op.xq) : "");
            }
            return;
          }
          slabs(o, op.rows, [&](int at, int r) { o << parts_statement(op, p, n, at, r, nullptr); });
        } else if constexpr (std::is_same_v<T, GemvGlu>) {
          const Matrix& g = p.matrix(op.wg);
          const Matrix& u = p.matrix(op.wu);
          const int rpw = k.gemv_rows_per_warp, warps = k.gemv_warps;
          if (on_tensor_cores(k, g, op.rows))
            return gemm(o, p, g, &u, n(op.x), "nullptr", n(op.out), op.rows, op.xq ? n.name(*op.xq) : "");
          slabs(o, op.rows, [&](int at, int r) {
            Ref x = op.x, y = op.out;
            x.offset += size_t(at) * g.cols;
            y.offset += size_t(at) * g.rows;
            const auto [xt, xa] = gemv_input(op.xq, n, x);
            o << "lk_gemv_glu<" << format_type(g.type) << ", " << rpw << ", " << r << xt << "><<<"
              << cdiv(g.rows, size_t(warps) * rpw) << ", " << 32 * warps << ", 0, st>>>(" << g.name << ", " << u.name
              << ", " << xa << ", " << n(y) << ", " << g.cols << ", " << g.rows << ");";
          });
        } else if constexpr (std::is_same_v<T, GemvNorm>) {
          const Matrix& w = p.matrix(op.gemv.w);
          if (op.gemv.rows > 8 || on_tensor_cores(k, w, op.gemv.rows) || k.gemv_split != 1) {
            // Chunks of slabs or on the tensor cores: the projection's launches, then the norm's.
            o << launch(Launch{op.gemv, {}, {}, "", ""}, p, n) << "\n  "
              << launch(Launch{op.norm, {}, {}, "", ""}, p, n);
            return;
          }
          const int rpw = k.gemv_rows_per_warp, warps = k.gemv_warps;
          const auto [xt, xa] = gemv_input(op.gemv.xq, n, op.gemv.x);
          o << "lk_gemv_norm<" << format_type(w.type) << ", " << rpw << ", " << op.gemv.rows << xt << "><<<"
            << cdiv(w.rows, size_t(warps) * rpw) << ", " << 32 * warps << ", 0, st>>>(" << w.name << ", " << xa << ", "
            << op.gemv.bias.value_or("nullptr") << ", " << n(op.gemv.y) << ", " << w.cols << ", " << w.rows
            << ", lk_norm_tail{" << n(op.norm.x) << ", " << op.norm.w << ", " << n(op.norm.out) << ", " << m.d_model
            << ", " << flit(m.norm_eps) << "});";
        } else if constexpr (std::is_same_v<T, GemvRope>) {
          if (op.qkv.rows > 8 || on_tensor_cores(k, p.matrix(op.qkv.parts[0].w), op.qkv.rows)) {
            // Chunks of slabs or on the tensor cores: the projection's launches, then rope's.
            o << launch(Launch{op.qkv, {}, {}, "", ""}, p, n) << "\n  "
              << launch(Launch{op.rope, {}, {}, "", ""}, p, n);
            return;
          }
          const std::pair<std::string, std::string> rope = {
              rope_mode(op.rope, m) + ", " + std::to_string(rope_pairs(m)), rope_args(op.rope, p, n)};
          o << parts_statement(op.qkv, p, n, 0, op.qkv.rows, &rope);
        } else if constexpr (std::is_same_v<T, QuantizeI8>) {
          o << "lk_quantize_i8<" << (op.fragments ? "true" : "false") << "><<<dim3(" << cdiv(op.k, 256) << ", "
            << op.rows << "), 64, 0, st>>>(" << n(op.x) << ", " << n.name(op.xq) << ", " << op.k << ", " << op.rows
            << ");";
        } else if constexpr (std::is_same_v<T, Rope>) {
          const size_t heads = m.heads + m.kv_heads * (op.append ? 2 : 1);
          o << "lk_rope<" << rope_mode(op, m) << ", " << (op.append ? "true" : "false") << ", " << rope_pairs(m)
            << "><<<dim3(" << cdiv(heads, 4) << ", " << op.rows << "), 128, 0, st>>>(" << rope_args(op, p, n) << ");";
        } else if constexpr (std::is_same_v<T, KvAppend>) {
          o << "lk_kv_append<<<dim3(" << m.kv_heads << ", " << op.rows << "), 128, 0, st>>>(" << n(op.k) << ", "
            << n(op.v) << ", " << n.name(op.kc) << ", " << n.name(op.vc) << ", s_pos, " << m.kv_heads << ", "
            << m.head_dim << ", " << m.value_dim << ", " << p.ctx << ");";
        } else if constexpr (std::is_same_v<T, Attention>) {
          o << "lk_attention<" << op.heads << ", " << cdiv(m.head_dim, 32) << ", " << cdiv(m.value_dim, 32)
            << "><<<dim3(" << m.kv_heads * (m.group() / op.heads) << ", " << op.splits << ", " << op.rows
            << "), 128, lk_attention_smem(" << op.heads << ", " << cdiv(m.value_dim, 32) << "), st>>>(" << n(op.q)
            << ", " << n.name(op.kc) << ", " << n.name(op.vc) << ", s_pos, " << (op.part ? "nullptr" : n(op.out))
            << ", " << (op.part ? "(lk_acc*)" + n(*op.part) : "nullptr") << ", " << m.heads << ", " << m.head_dim
            << ", " << m.value_dim << ", " << p.ctx << ", " << dlit(1.0 / std::sqrt(double(m.head_dim))) << ", "
            << op.splits << ", " << m.group() << ");";
        } else if constexpr (std::is_same_v<T, Fold>) {
          o << "lk_attention_fold<<<dim3(" << m.heads << ", " << op.rows << "), "
            << cdiv(std::min<size_t>(m.value_dim, 256), 32) * 32 << ", 0, st>>>((const lk_acc*)" << n(op.part) << ", "
            << n(op.out) << ", " << m.heads << ", " << m.value_dim << ", " << op.splits << ");";
        } else if constexpr (std::is_same_v<T, SwiGlu>) {
          o << "lk_swiglu<<<" << cdiv(op.n, 256) << ", 256, 0, st>>>(" << n(op.g) << ", " << n(op.u) << ", "
            << n(op.out) << ", " << op.n << ");";
        } else if constexpr (std::is_same_v<T, ArgMax>) {
          o << "lk_argmax<<<" << std::min<size_t>(256, cdiv(m.vocab, 2048)) << ", 256, 0, st>>>(" << n(op.logits)
            << ", " << m.vocab << ", s_tok, s_gen, s_count, s_pos, " << op.rows << ");";
        }
      },
      l.op);
  return o.str();
}

std::string c_type(const Plan& p, Elem e) {
  if (e == Elem::Int) return "int";
  return p.act_bytes() == 8 ? "double" : "float";
}

size_t rounded(size_t n) {
  return (n + 255) / 256 * 256;
}

}  // namespace

Program compile(const gguf::File& file, const model::Model& m, const knobs::Knobs& k, const knobs::Target& t) {
  const Plan p = plan(file, m, k, t);
  const bool precise = k.numerics == knobs::Numerics::Precise;
  std::ostringstream cu;
  cu << "// A lane compiled by lane-tune " << version() << " for " << m.name << " (" << m.architecture << ", "
     << m.layers << " layers) under the knobs " << k.key() << ".\n"
     << "// Run: lane <checkpoint.gguf> <sidecar> <n_gen> [--logits FILE] TOKEN... (see lane-tune's design.md).\n"
     << "#include <algorithm>\n#include <cerrno>\n#include <climits>\n#include <cmath>\n#include <cstdint>\n#include "
        "<cstdio>\n"
     << "#include <cstdlib>\n#include <cstring>\n#include <functional>\n#include <string>\n#include <vector>\n"
     << "#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n"
     << "#include <type_traits>\n#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n\n"
     << "typedef " << (precise ? "double" : "float") << " lk_act;\n"
     << "typedef " << (precise ? "double" : "float") << " lk_acc;\n"
     << "#define LK_INT8 " << int8_words(k) << "\n\n";
  for (const char* f : kLibrary) cu << "// ---- kernels/" << f << "\n" << kernels::source(f) << "\n";

  // Constants: the checkpoint, the sidecar, the shapes, the residence order.
  const uint64_t side_digest = XXH64(p.sidecar.data(), p.sidecar.size(), 0);
  size_t fixed = 0;
  for (const Vector& v : p.vectors) fixed += rounded(v.n * 4);
  for (const SideArray& s : p.side) fixed += rounded(s.count * p.act_bytes());
  for (const auto& [name, b] : p.carried) fixed += rounded(p.bytes_of(b));
  fixed += rounded(p.arena_bytes);
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
    Names n(p, f);
    for (const auto& [name, slot] : f.slots) {
      const Elem e = f.buffers.at(name).elem;
      globals << "static " << (e == Elem::Acc ? "lk_acc" : c_type(p, e)) << "* " << n.name(name) << ";\n";
    }
  }
  cu << globals.str() << "\n";
  // Each form's launches in functions of at most a layer's worth, each launch after the hook that records its
  // --profile event and, under --stagger, its stall.
  for (const Form& f : p.forms) {
    Names n(p, f);
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
                                 (k.pdl ? with_pdl(launch(f.launches[i], p, n)) : launch(f.launches[i], p, n));
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
     << "  setenv(\"CUDA_MODULE_LOADING\", \"EAGER\", 1);\n"
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
    else
      cu << "  " << w.name << " = lk_upload_plain<" << plain_elem(w.type) << ">(file, " << off << "ULL, " << w.rows
         << ", " << w.cols << ", " << host << ");\n";
  }
  for (const Vector& v : p.vectors)
    cu << "  " << v.name << " = lk_upload_f32(file, " << file.data_start() + v.tensor->offset << "ULL, " << v.n
       << ");\n";
  for (const SideArray& s : p.side)
    cu << "  " << s.name << " = lk_upload_side(side, " << s.offset << ", " << s.count << ");\n";
  for (const auto& [name, b] : p.carried)
    cu << "  s_" << name << " = lk_zeroed<" << c_type(p, b.elem) << ">(" << b.count << ");\n";
  // The arena, poisoned so that a read of a byte no launch of the step wrote is a NaN.
  cu << "  unsigned char* arena = lk_carve<unsigned char>(" << p.arena_bytes << ", false);\n"
     << "  CK(cudaMemset(arena, 0xff, " << p.arena_bytes << "));\n";
  for (const Form& f : p.forms) {
    Names n(p, f);
    for (const auto& [name, slot] : f.slots) {
      const Elem e = f.buffers.at(name).elem;
      const std::string ct = e == Elem::Acc ? "lk_acc" : c_type(p, e);
      cu << "  " << n.name(name) << " = (" << ct << "*)(arena + " << slot.offset << ");\n";
    }
  }
  cu << "  if (lk_pool_at != lk_pool_bytes || lk_hpool_at != lk_hpool_bytes) {\n"
     << "    fprintf(stderr, \"the program allocates %zu of its %zu pooled device bytes and %zu of its %zu host "
        "bytes\\n\", lk_pool_at, lk_pool_bytes, lk_hpool_at, lk_hpool_bytes);\n"
     << "    return 5;\n  }\n"
     << "  printf(\"LANE_CONTRACT: " << kContractVersion
     << "\\nDEVICE_BYTES: %zu\\nHOST_BYTES: %zu\\nMOVED: %d\\n\", lk_pool_bytes, lk_hpool_bytes, moved);\n";
  // Kernels that take more than 48 KB of shared memory.
  const size_t heads = k.attn_heads ? size_t(k.attn_heads) : m.group();
  const size_t attn_smem = (precise ? 8 : 4) * (8 * heads + 4 * heads * 32 * cdiv(m.value_dim, 32));
  if (attn_smem > 48 * 1024)
    cu << "  CK(cudaFuncSetAttribute(lk_attention<" << heads << ", " << cdiv(m.head_dim, 32) << ", "
       << cdiv(m.value_dim, 32) << ">, cudaFuncAttributeMaxDynamicSharedMemorySize, " << attn_smem << "));\n";

  cu << "  lk_stagger = a.stagger;\n  lk_seed = a.seed;\n  std::vector<lk_form> forms;\n";
  if (k.side_streams) cu << "  lk_side_init();\n";
  nlohmann::json forms_json = nlohmann::json::array();
  for (const Form& f : p.forms) {
    Names n(p, f);
    cu << "  forms.push_back(lk_form{" << f.rows << ", [](cudaStream_t st, const cudaEvent_t* ev) {\n";
    std::ostringstream kinds, outs, kernels;
    for (size_t i = 0; i < f.launches.size(); ++i) {
      kinds << (i ? ", " : "") << '"' << f.launches[i].kind << '"';
      outs << (i ? ", " : "") << '"' << f.launches[i].output << '"';
      // The kernels a launch runs (a chunk's GEMV in slabs, the parts of a fused projection on the tensor cores).
      const std::string text = launch(f.launches[i], p, n);
      size_t count = 0;
      for (size_t at = text.find("<<<"); at != std::string::npos; at = text.find("<<<", at + 3)) ++count;
      kernels << (i ? ", " : "") << count;
    }
    for (size_t part = 0; part * kLaunchesPerFunction < f.launches.size(); ++part)
      cu << "    step" << f.rows << "_" << part << "(st, ev);\n";
    cu << "    lk_after(st, ev, " << f.launches.size() << ");\n"
       << "  }, " << n.name(f.token) << ", " << n.name(f.logits) << ", {" << kinds.str() << "}, {" << outs.str()
       << "}, {" << kernels.str() << "}});\n";
    forms_json.push_back({{"rows", f.rows}, {"launches", f.launches.size()}, {"arena_bytes", f.arena_bytes}});
  }
  cu << "  const lk_state state{s_pos, s_tok, s_gen, s_count, s_prompt, VOCAB, CTX};\n"
     << "  return lk_drive(a, forms, state, GRAPHS);\n}\n";

  Program prog;
  prog.cu = cu.str();
  prog.sidecar = p.sidecar;
  prog.description = {
      {"model", m.name},
      {"architecture", m.architecture},
      {"knobs", k.to_json()},
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
