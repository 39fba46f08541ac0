// The lowering: each launch of a schedule's form as kernel calls (kernel, template arguments, grid, block, shared
// memory and parameters), the one place these are decided.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "compiler/error.hpp"
#include "compiler/lowering.hpp"
#include "kernels/shapes.cuh"

namespace lt::lane {

Arg Arg::pointer(Place p, std::string cast) {
  Arg a;
  a.kind = Kind::Pointer;
  a.place = std::move(p);
  a.cast = std::move(cast);
  return a;
}
Arg Arg::null() {
  return pointer(Place{});
}
Arg Arg::integer(int64_t v) {
  Arg a;
  a.kind = Kind::Int;
  a.i = v;
  return a;
}
Arg Arg::real(float v) {
  Arg a;
  a.kind = Kind::Float;
  a.f = v;
  return a;
}
Arg Arg::dbl(double v) {
  Arg a;
  a.kind = Kind::Double;
  a.f = v;
  return a;
}
Arg Arg::weights(std::string name) {
  Arg a;
  a.kind = Kind::Matrix;
  a.matrix = std::move(name);
  return a;
}
Arg Arg::aggregate(std::string type, std::vector<Arg> members) {
  Arg a;
  a.kind = Kind::Aggregate;
  a.type = std::move(type);
  a.members = std::move(members);
  return a;
}

std::string KernelCall::instance() const {
  if (targs.empty()) return kernel;
  std::string s = kernel + "<";
  for (size_t i = 0; i < targs.size(); ++i) s += (i ? ", " : "") + targs[i];
  return s + ">";
}

std::string format_type(ggml::Type t) {
  switch (t) {
    case ggml::Type::Q8_0:
      return "lk_q8";
    case ggml::Type::F16:
      return "lk_plain<__half>";
    case ggml::Type::BF16:
      return "lk_plain<__nv_bfloat16>";
    case ggml::Type::F32:
      return "lk_plain<float>";
    default:  // the block formats the schedule accepts
      return "lk_blk<" + block_macro(t) + ">";
  }
}

std::string block_macro(ggml::Type t) {
  std::string name(ggml::traits_of(t).name);
  for (char& c : name) c = char(std::toupper(static_cast<unsigned char>(c)));
  return "LK_" + name;
}

size_t attention_smem(size_t act_bytes, int heads, int vper) {
  return size_t(lk_attention_smem(act_bytes, heads, vper));
}

bool lanes_attention(const knobs::Knobs& k, const model::Model& m) {
  return k.attn_lanes && m.head_dim % 8 == 0 && m.value_dim % 8 == 0;
}

bool mma_attention(const knobs::Knobs& k, int rows) {
  return k.attn_mma == 2 || (k.attn_mma == 1 && rows > 1);
}

bool mma_attention_step(const model::Model& m, int rows) {
  return size_t(rows) * m.group() <= 16;
}

bool folds_in_attention(const Schedule& p, int rows) {
  return rows == 1 && mma_attention(p.knobs, rows) && mma_attention_step(p.model, rows) && !p.knobs.attn_fold_launch;
}

std::string c_place(const Schedule& p, const Form& f, const Place& place) {
  std::string base;
  switch (place.space) {
    case Place::Space::Null:
      return "nullptr";
    case Place::Space::Step:
      base = "f" + std::to_string(f.rows) + "_" + place.name;
      break;
    case Place::Space::Carried:
      base = "s_" + place.name;
      break;
    default:
      base = place.name;
  }
  (void)p;
  return place.offset ? "(" + base + " + " + std::to_string(place.offset) + ")" : base;
}

namespace {

size_t cdiv(size_t a, size_t b) {
  return (a + b - 1) / b;
}

// The elements of a format's 16-byte unit.
int unit_elems(ggml::Type t) {
  return lk_is_block(int(t)) ? 32 : t == ggml::Type::Q8_0 ? 16 : t == ggml::Type::F32 ? 4 : 8;
}

// Threads of a norm block over a row of d: a float4 of the row a thread (whole warps, at least 256, at most 1,024),
// the register form's shortest chain. Session 36 on the H200, the 8B's 4,096: 1,024 threads with 1 piece 3.96 us a
// launch, 512 with 4 pieces' registers (2 used) 3.94, 512 with 2 pieces' 4.62 (decode 0.97x); the 0.6B's 1,024 at
// 256 threads with 1 piece's registers against 4 pieces': decode +1.9%.
int norm_threads(size_t d) {
  return int(std::clamp<size_t>((d / 4 + 31) / 32 * 32, 256, 1024));
}

Dims dims1(size_t x) {
  return Dims{{unsigned(x), 1, 1}, 1};
}
Dims dims2(size_t x, size_t y) {
  return Dims{{unsigned(x), unsigned(y), 1}, 2};
}
Dims dims3(size_t x, size_t y, size_t z) {
  return Dims{{unsigned(x), unsigned(y), unsigned(z)}, 3};
}
// A GEMV's grid: x blocks by `slabs` along y (one: the plain 1-D grid the decode step's launches print).
Dims grid_of(size_t x, int slabs) {
  return slabs > 1 ? dims2(x, size_t(slabs)) : dims1(x);
}

std::string flag(bool b) {
  return b ? "true" : "false";
}

// Lowers one schedule form's launches: names its places, and builds each kind of launch's calls.
class Lowerer {
 public:
  Lowerer(const Schedule& p, const Form& f) : p_(p), f_(f), m_(p.model), k_(p.knobs) {}

  std::vector<KernelCall> lower(const Launch& l) {
    std::vector<KernelCall> out;
    std::visit([&](const auto& op) { add(op, out); }, l.op);
    return out;
  }

 private:
  // The place a buffer or a weight vector's name stands for, `offset` elements in.
  Place place(const std::string& name, size_t offset = 0) const {
    if (f_.buffers.count(name)) return Place{Place::Space::Step, name, offset};
    if (p_.carried.count(name)) return Place{Place::Space::Carried, name, offset};
    for (const SideArray& s : p_.side)
      if (s.name == name) return Place{Place::Space::Side, name, offset};
    for (const Vector& v : p_.vectors)
      if (v.name == name) return Place{Place::Space::Vector, name, offset};
    throw Error("the lowering has no buffer, state or vector named " + name);
  }
  Arg ptr(const Ref& r, size_t extra = 0) const { return Arg::pointer(place(r.buf, r.offset + extra)); }
  Arg ptr(const std::string& name) const { return Arg::pointer(place(name)); }
  Arg opt_ptr(const std::optional<std::string>& name) const { return name ? ptr(*name) : Arg::null(); }

  // A GEMV's input as its kernel takes it from row `at` of x (k wide): x, or under gemv_prequant the quantized copy of
  // x's `rows` rows (an lk_xq from row `at`, the kernel's last template argument, appended to `targs`).
  Arg gemv_input(const std::optional<std::string>& xq, const Ref& x, int at, size_t k, std::vector<std::string>& targs,
                 int rows = 1) const {
    if (!xq) return ptr(x, size_t(at) * k);
    targs.push_back("lk_xq");
    // Every field of kernels/gemv.cuh's lk_xq, those left at their defaults too: the resident host lays a parameter out
    // from its members, and checks its bytes against the kernel's (a copy of 3 of the 5 fields was 16 bytes of 32).
    std::vector<Arg> fields = {Arg::pointer(place(*xq), "(const int*)"), Arg::integer(rows), Arg::integer(at),
                               Arg::null(), Arg::real(0.f)};
    if (auto s = f_.span_sums.find(*xq); s != f_.span_sums.end()) {  // (norm_fold: a copy written unscaled)
      fields[3] = ptr(s->second);
      fields[4] = Arg::real(float(m_.norm_eps));
    }
    return Arg::aggregate("lk_xq", fields);
  }

  // The units a lane takes of each row of a plain GEMV over `w` in gemv_short's form (lk_gemv with A that many and
  // LK_GEMV_AHEAD / A times the rows a warp), or 0 where it keeps the plain form: under the knob (whose constraint
  // holds the int8 numerics and unsplit GEMVs), a matrix whose rows are at most half a round of loads
  // (lk_gemv_short_units), and enough rows that the launch still gives every multiprocessor two blocks.
  int short_gemv(const Matrix& w) const {
    const int per = k_.gemv_short ? lk_gemv_short_units(int(w.type), w.cols) : 0;
    if (per == 0) return 0;
    const size_t rows_a_block = size_t(k_.gemv_warps) * knobs::gemv_rows(k_, w.type) * size_t(LK_GEMV_AHEAD / per);
    return cdiv(w.rows, rows_a_block) >= size_t(2 * p_.target.sms) ? per : 0;
  }

  // One tensor-core GEMM: y = W x (+ bias), or with `u` y = silu(W x) * (U x), over all `rows` rows: lk_gemm_i8 (x
  // quantized as the block stages it, a warp 8 output rows), or with `xq` lk_gemm_i8q (x quantized before; a warp 16
  // output rows and TN groups of 8 activation rows, TN the largest of 4, 2, 1 that still gives the GPU 4 warps an SM;
  // lk_gemm_i8qb over a block format), or under gemm_tile lk_gemm_i8t (tiled_gemm; lk_gemm_i8tb over a block format).
  KernelCall gemm(const Matrix& w, const Matrix* u, const Ref& x, const std::optional<std::string>& bias, const Ref& y,
                  int rows, const std::optional<std::string>& xq, const std::optional<std::string>& yh = std::nullopt,
                  bool y_read = true) const {
    KernelCall c;
    const std::string glu = flag(u != nullptr);
    if (!xq) {
      const int warps = k_.gemm_rows / 8;
      c.kernel = "lk_gemm_i8";
      c.targs = {std::to_string(rows), glu};
      c.grid = dims1(cdiv(w.rows, size_t(8 * warps)));
      c.block = dims1(32 * warps);
      c.params = {Arg::weights(w.name),          Arg::weights(u ? u->name : w.name), ptr(x), opt_ptr(bias), ptr(y),
                  Arg::integer(int64_t(w.cols)), Arg::integer(int64_t(w.rows))};
      return c;
    }
    const bool blocks = lk_is_block(int(w.type));
    if (k_.gemm_half) return half_gemm(w, u, bias, y, rows, *xq, yh, y_read);
    if (k_.gemm_tile) return tiled_gemm(w, u, bias, y, rows, *xq);
    const int warps = k_.gemm_rows / 16;
    int tn = 4;
    while (tn > 1 && (rows % (8 * tn) || cdiv(w.rows, 16) * size_t(rows / (8 * tn)) < size_t(4 * p_.target.sms)))
      tn /= 2;
    c.block = dims1(32 * warps);
    c.params = quantized_gemm_params(w, u, bias, y, rows, *xq);
    if (blocks) {
      c.kernel = "lk_gemm_i8qb";
      c.targs = {block_macro(w.type), glu, std::to_string(tn)};
      c.grid = dims2(size_t(rows / (8 * tn)), cdiv(w.rows, size_t(16 * warps)));  // the activation groups along x
      return c;
    }
    c.kernel = "lk_gemm_i8q";
    c.targs = {glu, std::to_string(tn)};
    c.grid = dims2(cdiv(w.rows, size_t(16 * warps)), size_t(rows / (8 * tn)));
    return c;
  }

  // gemm_tile's GEMM, lk_gemm_i8t<GLU, BN>: a block 64 weight rows (GLU: 32 of each matrix) by BN activation rows, BN
  // the knob's (at most 64 but for GLU under int8: more, and the registers spill), halved while the grid would give the
  // GPU fewer than a block an SM, down to 32 (GLU 64: a warp takes its 8-row tiles in pairs); its shape and shared
  // memory kernels/shapes.cuh's.
  KernelCall tiled_gemm(const Matrix& w, const Matrix* u, const std::optional<std::string>& bias, const Ref& y,
                        int rows, const std::string& xq) const {
    const size_t out_rows = size_t(lk_gemm_i8t_outputs(u != nullptr));
    const int words = int8_words(k_);
    const int least = u ? 64 : 32, most = u && words == 1 ? 128 : 64;
    int bn = std::min(std::max(k_.gemm_tile, least), most);
    while (bn > least && cdiv(w.rows, out_rows) * cdiv(size_t(rows), size_t(bn)) < size_t(p_.target.sms)) bn /= 2;
    KernelCall c;
    c.grid = dims2(cdiv(w.rows, out_rows), cdiv(size_t(rows), size_t(bn)));
    c.block = dims1(32 * LK_GT_WARPS);
    if (lk_is_block(int(w.type))) {  // the weights unpacked into int8 tiles on the way (lk_gemm_i8tb)
      c.kernel = "lk_gemm_i8tb";
      c.targs = {block_macro(w.type), flag(u != nullptr), std::to_string(bn)};
      c.smem = size_t(lk_gemm_i8tb_smem(words, bn));
    } else {
      c.kernel = "lk_gemm_i8t";
      c.targs = {flag(u != nullptr), std::to_string(bn)};
      c.smem = size_t(lk_gemm_i8t_smem(words, bn));
    }
    c.params = quantized_gemm_params(w, u, bias, y, rows, xq);
    return c;
  }

  // gemm_half's kernel in shape `h` over matrices of type `w`: lk_gemm_w<W, GLU, BN, WGS, KS> (wgmma, Hopper's) or
  // lk_gemm_h<W, GLU, BN, BM>, or without `glu` their grouped forms (lk_gemm_w_parts, lk_gemm_h_parts: no GLU flag);
  // the block and shared memory kernels/shapes.cuh's.
  static KernelCall half_kernel(const HalfGemm& h, ggml::Type w, std::optional<bool> glu) {
    KernelCall c;
    c.kernel = std::string(h.wgs ? "lk_gemm_w" : "lk_gemm_h") + (glu ? "" : "_parts");
    c.targs = {format_type(w)};
    if (glu) c.targs.push_back(flag(*glu));
    c.targs.push_back(std::to_string(h.bn));
    if (h.wgs) {
      c.targs.insert(c.targs.end(), {std::to_string(h.wgs), std::to_string(h.ks)});
      c.block = dims1(size_t(128 * h.wgs));
      c.smem = size_t(lk_gemm_w_smem(h.bn, h.wgs, h.ks));
    } else {
      c.targs.push_back(std::to_string(h.bm));
      c.block = dims1(32 * LK_GH_WARPS);
      c.smem = size_t(lk_gemm_h_smem(h.bm, h.bn));
    }
    return c;
  }

  // gemm_half's GEMM, lk_gemm_h<W, GLU, BN, BM> (or on Hopper lk_gemm_w<W, GLU, BN, WGS, KS>), shaped and split as
  // half_gemm_shape says; its shape and shared memory kernels/shapes.cuh's; a split one's parts meet in gemm_part,
  // counted in gemm_count; `yh` y's f16 copy, if any, and y itself null where only the copy is read (`y_read`).
  KernelCall half_gemm(const Matrix& w, const Matrix* u, const std::optional<std::string>& bias, const Ref& y, int rows,
                       const std::string& xq, const std::optional<std::string>& yh, bool y_read) const {
    const HalfGemm h = half_gemm_shape(p_, w, u != nullptr, rows);
    KernelCall c = half_kernel(h, w.type, u != nullptr);
    c.grid = dims3(h.gx, h.gy, size_t(h.split));
    c.params = quantized_gemm_params(w, u, bias, y, rows, xq);
    c.params[2] = Arg::pointer(place(xq), "(const __half*)");
    if (!y_read) c.params[4] = Arg::null();
    c.params.push_back(h.split > 1 ? ptr("gemm_part") : Arg::null());
    c.params.push_back(h.split > 1 ? ptr("gemm_count") : Arg::null());
    c.params.push_back(yh ? Arg::pointer(place(*yh), "(__half*)") : Arg::null());  // (y's f16 copy: GemvGlu's out_half)
    return c;
  }

  // gemm_half's GEMM over a group of parts of one format (gemm_groups): lk_gemm_w_parts or lk_gemm_h_parts, one grid
  // over the parts' output tiles in order (kernels/gemm_half.cuh's lk_gemm_group), in the group's shape: its whole
  // tiles, then its split tiles' parts (lk_gemm_unit).
  KernelCall grouped_gemm(const std::vector<const Gemv*>& group, int rows, const std::string& xq) const {
    std::vector<const Matrix*> ms;
    for (const Gemv* g : group) ms.push_back(&p_.matrix(g->w));
    const Matrix& w = *ms.front();
    const HalfGemm h = half_gemm_shape(p_, ms, rows);
    KernelCall c = half_kernel(h, w.type, std::nullopt);
    c.grid = dims1(h.units());
    std::vector<Arg> ws, bs, ys, ns;
    for (size_t i = 0; i < 3; ++i) {
      const Gemv* g = i < group.size() ? group[i] : nullptr;
      ws.push_back(Arg::weights(p_.matrix(g ? g->w : group.front()->w).name));
      bs.push_back(g && g->bias ? ptr(*g->bias) : Arg::null());
      ys.push_back(g ? ptr(g->y) : Arg::null());
      ns.push_back(Arg::integer(g ? int64_t(p_.matrix(g->w).rows) : 0));
    }
    c.params = {
        Arg::aggregate("lk_gemm_group<" + format_type(w.type) + ">", {Arg::aggregate("", ws), Arg::aggregate("", bs),
                                                                      Arg::aggregate("", ys), Arg::aggregate("", ns)}),
        Arg::pointer(place(xq), "(const __half*)"),
        Arg::integer(int64_t(w.cols)),
        Arg::integer(rows),
        Arg::integer(int64_t(h.gx)),
        Arg::integer(int64_t(h.full)),
        Arg::integer(h.split),
        h.split > 1 ? ptr("gemm_part") : Arg::null(),
        h.split > 1 ? ptr("gemm_count") : Arg::null()};
    return c;
  }

  // The parameters of a GEMM over a quantized copy (lk_gemm_i8q, lk_gemm_i8t): both matrices (the first twice without
  // GLU), the copy, the bias, the output, k, n and the rows.
  std::vector<Arg> quantized_gemm_params(const Matrix& w, const Matrix* u, const std::optional<std::string>& bias,
                                         const Ref& y, int rows, const std::string& xq) const {
    return {Arg::weights(w.name),
            Arg::weights(u ? u->name : w.name),
            Arg::pointer(place(xq), "(const int*)"),
            opt_ptr(bias),
            ptr(y),
            Arg::integer(int64_t(w.cols)),
            Arg::integer(int64_t(w.rows)),
            Arg::integer(rows)};
  }

  // Rope's parameters for `op` (an lk_rope_args); without one (the tensor-core attention where it does not rope) its
  // buffers null.
  Arg rope_args(const Rope* op) const {
    const bool append = op && op->append.has_value();
    return Arg::aggregate(
        "lk_rope_args",
        {op ? ptr(op->q) : Arg::null(), op ? ptr(op->k) : Arg::null(), op ? opt_ptr(op->qn) : Arg::null(),
         op ? opt_ptr(op->kn) : Arg::null(), ptr(op && op->table ? "c_rope_cos_swa" : "c_rope_cos"),
         ptr(op && op->table ? "c_rope_sin_swa" : "c_rope_sin"), ptr("pos"), Arg::integer(m_.heads),
         Arg::integer(m_.kv_heads), Arg::integer(m_.head_dim), Arg::real(float(m_.norm_eps)),
         append ? ptr(op->append->v) : Arg::null(), append ? ptr(op->append->kc) : Arg::null(),
         append ? ptr(op->append->vc) : Arg::null(), Arg::integer(m_.value_dim), Arg::integer(p_.ctx)});
  }
  // Rope's kernels' first template arguments: NEOX, NORM.
  std::vector<std::string> rope_mode(const Rope& op) const {
    return {flag(m_.rope_mode == model::RopeMode::Neox), flag(op.qn.has_value())};
  }
  // The pairs a lane of rope's warp takes.
  size_t rope_pairs() const { return cdiv(m_.head_dim / 2, 32); }

  // A fused projection over the slab of `r` rows from row `at`: lk_gemv_parts, or with `rope` lk_gemv_parts_rope, or
  // with v in another format than q and k (fuse_qkv_mixed) lk_gemv_parts_mixed.
  KernelCall parts(const GemvParts& op, int at, int r, const Rope* rope) const {
    const Matrix& w0 = p_.matrix(op.parts[0].w);
    const int rpw = knobs::gemv_rows(k_, w0.type), warps = k_.gemv_warps;
    size_t total = 0;
    for (const Gemv& g : op.parts) total += p_.matrix(g.w).rows;
    std::vector<Arg> ms, bs, ys, ns;
    for (size_t i = 0; i < 3; ++i) {
      const bool real = i < op.parts.size();
      const Gemv& g = op.parts[real ? i : 0];
      const Matrix& w = p_.matrix(g.w);
      ms.push_back(Arg::weights(w.name));
      bs.push_back(real && g.bias ? ptr(*g.bias) : Arg::null());
      ys.push_back(real ? ptr(g.y, size_t(at) * w.rows) : Arg::null());
      ns.push_back(Arg::integer(real ? int64_t(w.rows) : 0));
    }
    KernelCall c;
    if (!rope && op.parts.size() == 3 && p_.matrix(op.parts[2].w).type != w0.type) {
      // (fuse_qkv_mixed: v in another format than q and k; q's and k's rows whole warps' of their format's, v's one a
      // warp: the launch holds its widest path's registers for every warp, and Q6_K's two rows a warp (117-124) left
      // the Q4_K q/k rows (55) 14 warps an SM, not 24; session 54, H100: the 8B's decode +2.0% at one row and
      // gemv_rows_q6_k 2, +0.6% at two rows a warp, logits bitwise equal)
      const Matrix& wv = p_.matrix(op.parts[2].w);
      const int rpwv = 1;
      c.kernel = "lk_gemv_parts_mixed";
      c.targs = {format_type(w0.type), format_type(wv.type), std::to_string(rpw), std::to_string(rpwv),
                 std::to_string(r)};
      Arg x = gemv_input(op.xq, op.x, at, w0.cols, c.targs, op.rows);
      const size_t qk_warps = (w0.rows + p_.matrix(op.parts[1].w).rows) / size_t(rpw);
      c.grid = dims1(cdiv(qk_warps + cdiv(wv.rows, size_t(rpwv)), size_t(warps)));
      c.block = dims1(32 * warps);
      c.params = {Arg::aggregate("lk_parts_mixed<" + format_type(w0.type) + ", " + format_type(wv.type) + ">",
                                 {Arg::aggregate("", {ms[0], ms[1]}), ms[2], Arg::aggregate("", bs),
                                  Arg::aggregate("", ys), Arg::aggregate("", ns)}),
                  x, Arg::integer(int64_t(w0.cols))};
      return c;
    }
    c.kernel = rope ? "lk_gemv_parts_rope" : "lk_gemv_parts";
    c.targs = {format_type(w0.type), std::to_string(rpw), std::to_string(r)};
    if (rope) {
      for (const std::string& t : rope_mode(*rope)) c.targs.push_back(t);
      c.targs.push_back(std::to_string(rope_pairs()));
    }
    Arg x = gemv_input(op.xq, op.x, at, w0.cols, c.targs, op.rows);
    c.grid = dims1(cdiv(total, size_t(warps) * rpw));
    c.block = dims1(32 * warps);
    c.params = {
        Arg::aggregate("lk_parts<" + format_type(w0.type) + ">", {Arg::aggregate("", ms), Arg::aggregate("", bs),
                                                                  Arg::aggregate("", ys), Arg::aggregate("", ns)}),
        x, Arg::integer(int64_t(w0.cols))};
    if (rope) c.params.push_back(rope_args(rope));
    return c;
  }

  // A GEMV-like launch over `rows` activation rows in slabs of at most 8 (the kernels' R).
  template <class F>
  static void slabs(int rows, F one) {
    for (int at = 0; at < rows; at += 8) one(at, std::min(8, rows - at));
  }
  // The same slabs as launches along y (kernels that take their slab from blockIdx.y: lk_gemv, lk_gemv_split,
  // lk_gemv_glu): one(at, r, count) for `count` slabs of r rows from row `at`, the whole slabs of 8 then the rest.
  template <class F>
  static void slab_grids(int rows, F one) {
    if (rows >= 8) one(0, 8, rows / 8);
    if (rows % 8) one(rows / 8 * 8, rows % 8, 1);
  }

  void add(const Embed& op, std::vector<KernelCall>& out) const {
    const Matrix& w = p_.matrix(op.table);
    KernelCall c{
        "lk_embed", {format_type(w.type)}, dims2(cdiv(m_.d_model / unit_elems(w.type), 256), op.rows), dims1(256), 0,
        {}};
    c.params = {Arg::weights(w.name), ptr(op.tok), ptr(op.out), Arg::integer(m_.d_model), Arg::real(op.scale)};
    out.push_back(std::move(c));
  }
  void add(const AddNorm& op, std::vector<KernelCall>& out) const {
    const int threads = norm_threads(m_.d_model);
    KernelCall c{"lk_add_rmsnorm",
                 {flag(op.add.has_value()), flag(op.xq.has_value() && !op.xq_half),
                  std::to_string(lk_norm_pieces(int(m_.d_model), threads))},
                 dims1(op.rows),
                 dims1(size_t(threads)),
                 0,
                 {}};
    if (op.xq_half) c.targs.push_back("true");  // (HALF: the chunk's f16 copy)
    c.params = {ptr(op.x),
                op.add ? ptr(*op.add) : Arg::null(),
                ptr(op.w),
                ptr(op.out),
                Arg::integer(m_.d_model),
                Arg::real(float(m_.norm_eps)),
                opt_ptr(op.xq)};
    out.push_back(std::move(c));
  }
  void add(const Gemv& op, std::vector<KernelCall>& out) const {
    const Matrix& w = p_.matrix(op.w);
    if (on_tensor_cores(k_, w, op.rows)) {
      out.push_back(gemm(w, nullptr, op.x, op.bias, op.y, op.rows, op.xq));
      return;
    }
    const int warps = k_.gemv_warps, split = k_.gemv_split;
    const int per = short_gemv(w);  // (gemv_short: the units a lane takes of a row, 0 for the plain form)
    const int rpw = knobs::gemv_rows(k_, w.type) * (per ? LK_GEMV_AHEAD / per : 1);
    slab_grids(op.rows, [&](int at, int r, int count) {
      KernelCall c;
      c.targs = {format_type(w.type), std::to_string(rpw), std::to_string(r)};
      if (split > 1) {
        c.kernel = "lk_gemv_split";
        c.targs.push_back(std::to_string(split));
        c.grid = grid_of(cdiv(w.rows, size_t(warps / split) * rpw), count);
      } else {
        c.kernel = "lk_gemv";
        c.grid = grid_of(cdiv(w.rows, size_t(warps) * rpw), count);
      }
      Arg x = gemv_input(op.xq, op.x, at, w.cols, c.targs, op.rows);
      if (per) {  // lk_gemv's X (when gemv_input named none) and A (gemv_short: a row's units a lane, 4x or 2x rows)
        if (!op.xq) c.targs.push_back("const lk_act*");
        c.targs.push_back(std::to_string(per));
      }
      c.block = dims1(32 * warps);
      c.params = {Arg::weights(w.name),
                  x,
                  opt_ptr(op.bias),
                  ptr(op.y, size_t(at) * w.rows),
                  Arg::integer(int64_t(w.cols)),
                  Arg::integer(int64_t(w.rows))};
      out.push_back(std::move(c));
    });
  }
  void add(const GemvParts& op, std::vector<KernelCall>& out) const {
    if (on_tensor_cores(k_, p_.matrix(op.parts[0].w), op.rows)) {  // a group a launch (gemm_groups), else a part
      for (const std::vector<const Gemv*>& group : gemm_groups(p_, op)) {
        const Gemv& g = *group.front();
        out.push_back(group.size() > 1 ? grouped_gemm(group, op.rows, *op.xq)
                                       : gemm(p_.matrix(g.w), nullptr, op.x, g.bias, g.y, op.rows, op.xq));
      }
      return;
    }
    slabs(op.rows, [&](int at, int r) { out.push_back(parts(op, at, r, nullptr)); });
  }
  void add(const GemvGlu& op, std::vector<KernelCall>& out) const {
    const Matrix& g = p_.matrix(op.wg);
    const Matrix& u = p_.matrix(op.wu);
    if (on_tensor_cores(k_, g, op.rows)) {
      out.push_back(gemm(g, &u, op.x, std::nullopt, op.out, op.rows, op.xq, op.out_half ? op.out_xq : std::nullopt,
                         !op.half_only));
      return;
    }
    if (op.out_xq) {  // (glu_groups: blocks of a 32-group of outputs writing its copy; the decode step's one row)
      const int per = lk_glu_group_units(int(g.type), g.cols, g.rows), rpw = per ? LK_GEMV_AHEAD / per : 0;
      if (!per || op.rows != 1 || !op.xq || u.type != g.type) throw Error("glu_groups needs short rows of one format");
      KernelCall c;
      c.kernel = "lk_gemv_glu_group";
      c.targs = {format_type(g.type), std::to_string(rpw), std::to_string(per)};
      Arg x = gemv_input(op.xq, op.x, 0, g.cols, c.targs, op.rows);
      c.grid = dims1(g.rows / 32);
      c.block = dims1(size_t(32 / rpw) * 32);
      c.smem = k_.glu_stage && lk_is_block(int(g.type))  // (glu_stage: a block format's copy row)
                   ? size_t(lk_xq_stage_smem(int8_words(k_), g.cols))
                   : 0;
      if (c.smem) c.targs.push_back("true");
      c.params = {Arg::weights(g.name),          Arg::weights(u.name), x, ptr(op.out), Arg::integer(int64_t(g.cols)),
                  Arg::integer(int64_t(g.rows)), ptr(*op.out_xq)};
      out.push_back(std::move(c));
      return;
    }
    const int rpw = knobs::gemv_rows(k_, g.type), warps = k_.gemv_warps;
    slab_grids(op.rows, [&](int at, int r, int count) {
      KernelCall c;
      c.kernel = "lk_gemv_glu";
      c.targs = {format_type(g.type), std::to_string(rpw), std::to_string(r)};
      Arg x = gemv_input(op.xq, op.x, at, g.cols, c.targs, op.rows);
      c.grid = grid_of(cdiv(g.rows, size_t(warps) * rpw), count);
      c.block = dims1(32 * warps);
      // (glu_stage: the joint rounds stage the int8 copy's row in shared memory)
      c.smem =
          k_.glu_stage
              ? size_t(lk_gemv_glu_smem(lk_is_block(int(g.type)), int8_words(k_), rpw, r, op.xq.has_value(), g.cols))
              : 0;
      if (c.smem) {
        if (!op.xq) c.targs.push_back("const lk_act*");
        c.targs.push_back("true");
      }
      c.params = {Arg::weights(g.name),          Arg::weights(u.name),         x, ptr(op.out, size_t(at) * g.rows),
                  Arg::integer(int64_t(g.cols)), Arg::integer(int64_t(g.rows))};
      out.push_back(std::move(c));
    });
  }
  void add(const GemvNorm& op, std::vector<KernelCall>& out) const {
    const Matrix& w = p_.matrix(op.gemv.w);
    if (op.spans) {  // norm_fold (the decode step's plain GEMV, whose form lk_gemv_fold keeps: gemv_short's A too)
      std::vector<KernelCall> plain;
      add(op.gemv, plain);
      if (plain.size() != 1 || plain[0].kernel != "lk_gemv") throw Error("norm_fold folds into a plain decode GEMV");
      KernelCall c = std::move(plain[0]);
      c.kernel = "lk_gemv_fold";
      c.targs.erase(c.targs.begin() + 2);  // (lk_gemv's R: the step's one row; its X and A stay)
      if (k_.norm_fold_groups) {  // (a block a 32-group of rows: 32 / RPW warps, RPW lk_gemv's, gemv_short's too)
        const int rpw = std::stoi(c.targs[1]);
        if (32 % rpw != 0 || w.rows % 32 != 0) throw Error("norm_fold_groups needs whole 32-groups of rows");
        c.kernel = "lk_gemv_fold_group";
        c.grid = dims1(w.rows / 32);
        c.block = dims1(size_t(32 / rpw) * 32);
      }
      c.params.push_back(
          Arg::aggregate("lk_norm_tail", {ptr(op.norm.x), ptr(op.norm.w), Arg::null(),  // (out unwritten)
                                          Arg::integer(m_.d_model), Arg::real(float(m_.norm_eps))}));
      c.params.push_back(ptr(*op.norm.xq));
      c.params.push_back(ptr(*op.spans));
      out.push_back(std::move(c));
      return;
    }
    if (op.gemv.rows > 8 || on_tensor_cores(k_, w, op.gemv.rows) || k_.gemv_split != 1) {
      // Chunks of slabs or on the tensor cores: the projection's calls, then the norm's.
      add(op.gemv, out);
      add(op.norm, out);
      return;
    }
    const int rpw = knobs::gemv_rows(k_, w.type), warps = k_.gemv_warps;
    KernelCall c;
    c.kernel = "lk_gemv_norm";
    c.targs = {format_type(w.type), std::to_string(rpw), std::to_string(op.gemv.rows)};
    Arg x = gemv_input(op.gemv.xq, op.gemv.x, 0, 0, c.targs, op.gemv.rows);
    c.grid = dims1(cdiv(w.rows, size_t(warps) * rpw));
    c.block = dims1(32 * warps);
    c.params = {Arg::weights(w.name),
                x,
                opt_ptr(op.gemv.bias),
                ptr(op.gemv.y),
                Arg::integer(int64_t(w.cols)),
                Arg::integer(int64_t(w.rows)),
                Arg::aggregate("lk_norm_tail", {ptr(op.norm.x), ptr(op.norm.w), ptr(op.norm.out),
                                                Arg::integer(m_.d_model), Arg::real(float(m_.norm_eps))})};
    out.push_back(std::move(c));
  }
  void add(const GemvRope& op, std::vector<KernelCall>& out) const {
    if (op.qkv.rows > 8 || on_tensor_cores(k_, p_.matrix(op.qkv.parts[0].w), op.qkv.rows)) {
      // Chunks of slabs or on the tensor cores: the projection's calls, then rope's.
      add(op.qkv, out);
      add(op.rope, out);
      return;
    }
    out.push_back(parts(op.qkv, 0, op.qkv.rows, &op.rope));
  }
  void add(const QuantizeI8& op, std::vector<KernelCall>& out) const {
    if (op.half) {  // (gemm_half: the values rounded to f16, 8 a thread)
      const size_t n = size_t(op.rows) * op.k;
      KernelCall c{"lk_half_rows", {}, dims1(cdiv(n / 8, 256)), dims1(256), 0, {}};
      c.params = {ptr(op.x), Arg::pointer(place(op.xq), "(__half*)"), Arg::integer(int64_t(n))};
      out.push_back(std::move(c));
      return;
    }
    KernelCall c{"lk_quantize_i8", {flag(op.fragments)}, dims2(cdiv(op.k, 256), op.rows), dims1(64), 0, {}};
    c.params = {ptr(op.x), ptr(op.xq), Arg::integer(int64_t(op.k)), Arg::integer(op.rows)};
    out.push_back(std::move(c));
  }
  void add(const Rope& op, std::vector<KernelCall>& out) const {
    const size_t heads = m_.heads + m_.kv_heads * (op.append ? 2 : 1);
    KernelCall c;
    c.kernel = "lk_rope";
    c.targs = rope_mode(op);
    c.targs.push_back(flag(op.append.has_value()));
    c.targs.push_back(std::to_string(rope_pairs()));
    c.grid = dims2(cdiv(heads, 4), op.rows);
    c.block = dims1(128);
    c.params = {rope_args(&op)};
    out.push_back(std::move(c));
  }
  void add(const KvAppend& op, std::vector<KernelCall>& out) const {
    KernelCall c{"lk_kv_append", {}, dims2(m_.kv_heads, op.rows), dims1(64), 0, {}};
    c.params = {ptr(op.k),
                ptr(op.v),
                ptr(op.kc),
                ptr(op.vc),
                ptr("pos"),
                Arg::integer(m_.kv_heads),
                Arg::integer(m_.head_dim),
                Arg::integer(m_.value_dim),
                Arg::integer(p_.ctx)};
    out.push_back(std::move(c));
  }
  void add(const Attention& op, std::vector<KernelCall>& out) const {
    if (mma_attention(k_, op.rows)) {
      out.push_back(mma_attention_call(op));
      return;
    }
    if (op.rope) throw Error("rope is folded into the tensor-core decode attention only (attn_mma 2)");
    const int per = int(cdiv(m_.head_dim, 32)), vper = int(cdiv(m_.value_dim, 32));
    KernelCall c;
    if (lanes_attention(k_, m_)) {
      c.kernel = "lk_attention_lanes";
      c.targs = {std::to_string(op.heads), std::to_string(vper)};
      c.smem = size_t(lk_attention_lanes_smem(p_.act_bytes(), op.heads, vper, int(m_.head_dim)));
    } else {
      c.kernel = "lk_attention";
      c.targs = {std::to_string(op.heads), std::to_string(per), std::to_string(vper)};
      c.smem = attention_smem(p_.act_bytes(), op.heads, vper);
    }
    c.grid = dims3(m_.kv_heads * (m_.group() / op.heads), op.splits, op.rows);
    c.block = dims1(128);
    c.params = attention_io(op);
    for (Arg a : {Arg::integer(m_.heads), Arg::integer(m_.head_dim), Arg::integer(m_.value_dim), Arg::integer(p_.ctx),
                  Arg::dbl(1.0 / std::sqrt(double(m_.attention_width()))), Arg::integer(op.splits),
                  Arg::integer(m_.group()), opt_ptr(op.xq)})
      c.params.push_back(a);
    out.push_back(std::move(c));
  }
  // Every attention kernel's first parameters: the queries, the caches, the position, then the output or (splits)
  // the partials (both where it folds them itself), the sinks (null: none, or the Fold's) and the layer's sliding
  // window (0: none). Its last: the int8 copy of the output it writes (gemv_prequant, one split or its own fold), or
  // null.
  std::vector<Arg> attention_io(const Attention& op) const {
    return {ptr(op.q),
            ptr(op.kc),
            ptr(op.vc),
            ptr("pos"),
            op.part && !op.fold ? Arg::null() : ptr(op.out),  // (its own fold writes both)
            op.part ? Arg::pointer(place(op.part->buf, op.part->offset), "(lk_acc*)") : Arg::null(),
            opt_ptr(op.sinks),
            Arg::integer(op.window)};
  }
  // Attention on the tensor cores: a block per key/value head, split and tile of query rows (rows x group): 64 of a
  // chunk's, or 16 with the warps sharing them (a decode step's or a small chunk's).
  KernelCall mma_attention_call(const Attention& op) const {
    const size_t hd = m_.head_dim, vd = m_.value_dim, group = m_.group();
    const bool step = mma_attention_step(m_, op.rows);
    KernelCall c;
    c.kernel = "lk_attention_mma";
    c.targs = {std::to_string(hd), std::to_string(vd), flag(step)};
    c.grid = dims3(m_.kv_heads, cdiv(size_t(op.rows) * group, size_t(lk_attention_mma_rows(step))), op.splits);
    c.block = dims1(32 * lk_attention_mma_warps(step, int(hd), int(vd)));
    c.smem = size_t(lk_attention_mma_smem(int(hd), int(vd), step));
    c.params = attention_io(op);
    for (Arg a : {Arg::integer(op.rows), Arg::integer(m_.heads), Arg::integer(p_.ctx),
                  Arg::real(float(1.4426950408889634 /
                                  std::sqrt(double(m_.attention_width())))),  // (log2 e: the kernel's base 2)
                  Arg::integer(op.splits), Arg::integer(int64_t(group)), opt_ptr(op.xq),
                  op.fold ? ptr("attn_count") : Arg::null()})
      c.params.push_back(a);
    if (op.rope) {  // ROPE: 1, the NeoX pairs 2, the per-head norm 4 (the rope kernels' NEOX and NORM)
      if (!step || op.rows != 1) throw Error("rope is folded into the decode step's attention only");
      const bool neox = m_.rope_mode == model::RopeMode::Neox, norm = op.rope->qn.has_value();
      c.targs.push_back(std::to_string(1 + (neox ? 2 : 0) + (norm ? 4 : 0)));
    }
    c.params.push_back(rope_args(op.rope ? &*op.rope : nullptr));
    return c;
  }
  void add(const Fold& op, std::vector<KernelCall>& out) const {
    KernelCall c{"lk_attention_fold",
                 {flag(op.xq.has_value())},
                 dims2(m_.heads, op.rows),
                 dims1(size_t(lk_fold_threads(int(m_.value_dim), op.splits))),
                 0,
                 {}};
    c.params = {Arg::pointer(place(op.part.buf, op.part.offset), "(const lk_acc*)"),
                ptr(op.out),
                opt_ptr(op.sinks),
                Arg::integer(m_.heads),
                Arg::integer(m_.value_dim),
                Arg::integer(op.splits),
                opt_ptr(op.xq)};
    out.push_back(std::move(c));
  }
  void add(const SwiGlu& op, std::vector<KernelCall>& out) const {
    KernelCall c{"lk_swiglu", {op.act == model::Activation::Gelu ? "1" : "0"}, dims1(cdiv(op.n, 256)), dims1(256), 0,
                 {}};
    c.params = {ptr(op.g), ptr(op.u), ptr(op.out), Arg::integer(int64_t(op.n))};
    out.push_back(std::move(c));
  }
  void add(const ArgMax& op, std::vector<KernelCall>& out) const {
    KernelCall c{"lk_argmax", {}, dims1(std::min<size_t>(256, cdiv(m_.vocab, 2048))), dims1(256), 0, {}};
    c.params = {ptr(op.logits), Arg::integer(m_.vocab), ptr("tok"), ptr("gen"), ptr("count"),
                ptr("pos"),     Arg::integer(op.rows)};
    out.push_back(std::move(c));
  }

  // lk_moe_route<SOFTMAX_FIRST, NORM>: a warp a row (the model's gating and renormalization as its template
  // arguments), the router's logits in shared memory.
  void add(const MoeRoute& op, std::vector<KernelCall>& out) const {
    KernelCall c{"lk_moe_route",
                 {flag(m_.gating == model::Gating::Softmax), flag(m_.norm_expert_weights)},
                 dims1(op.rows),
                 dims1(32),
                 m_.experts * p_.act_bytes(),
                 {}};
    c.params = {ptr(op.logits),
                Arg::integer(m_.experts),
                Arg::integer(m_.experts_used),
                opt_ptr(op.shared_w),
                ptr(op.x),
                Arg::integer(m_.d_model),
                ptr(op.ids),
                ptr(op.weights),
                op.gate ? ptr(*op.gate) : Arg::null()};
    out.push_back(std::move(c));
  }
  // lk_moe_group (one block; a table of its warps' pairs of each expert in shared memory), then lk_moe_gather (a
  // block a pair).
  void add(const MoeGroup& op, std::vector<KernelCall>& out) const {
    const size_t pairs = size_t(op.rows) * m_.experts_used;
    KernelCall group{"lk_moe_group", {}, dims1(1), dims1(LK_MOE_GROUP_THREADS), lk_moe_group_smem(int(m_.experts)), {}};
    group.params = {ptr(op.ids),          Arg::integer(int64_t(pairs)), Arg::integer(m_.experts), ptr(op.groups.count),
                    ptr(op.groups.first), ptr(op.groups.order),         ptr(op.groups.at)};
    KernelCall gather{"lk_moe_gather", {}, dims1(pairs), dims1(256), 0, {}};
    gather.params = {ptr(op.x), ptr(op.groups.order), Arg::integer(m_.experts_used), ptr(op.xg),
                     Arg::integer(m_.d_model)};
    out.push_back(std::move(group));
    out.push_back(std::move(gather));
  }
  // An expert projection's call over matrix `w` (its 3-D tensor's rows): the GEMV's warps and rows a warp over one
  // expert's rows along x; along y and z the (slot, row) pairs (`kernel`, the decode step: each pair's expert id read
  // on the device; x or its int8 copy `xq` of `xq_rows` rows), or with `groups` (`kernel` + "_grouped", a chunk) the
  // experts, each over its grouped pairs. Its parameters: the matrices, then `inputs`, then k, n and (not grouped)
  // the experts a token.
  KernelCall expert_gemv(const std::string& kernel, std::vector<std::string> targs, const Matrix& w,
                         const std::vector<Arg>& matrices, const Ref& x, const Ref& ids, const Ref& y, int rows,
                         const std::optional<ExpertGroups>& groups, const std::optional<std::string>& xq = {},
                         int xq_rows = 1) const {
    const int rpw = knobs::gemv_rows(k_, w.type), warps = k_.gemv_warps;
    const size_t n = w.rows / w.experts, blocks = cdiv(n, size_t(warps) * rpw);
    targs.push_back(std::to_string(rpw));
    const Arg input = gemv_input(groups ? std::nullopt : xq, x, 0, 0, targs, xq_rows);
    KernelCall c{kernel, targs, dims3(blocks, m_.experts_used, rows), dims1(32 * warps), 0, matrices};
    if (groups) {
      c.kernel += "_grouped";
      c.grid = dims2(blocks, m_.experts);
      c.params.insert(c.params.end(), {ptr(x), ptr(groups->count), ptr(groups->first), ptr(y),
                                       Arg::integer(int64_t(w.cols)), Arg::integer(int64_t(n))});
      return c;
    }
    c.params.insert(c.params.end(), {input, ptr(ids), ptr(y), Arg::integer(int64_t(w.cols)), Arg::integer(int64_t(n)),
                                     Arg::integer(m_.experts_used)});
    return c;
  }
  // gemm_half's grouped expert GEMM, lk_moe_gemm_h<W, GLU, BN, BM>: blocks of 128 weight rows (GLU: 64 of gate and
  // of up) by BN pairs: moe_tile's, or by rule 128 where the experts see 64 pairs each or more on average, else 64
  // (with three stages of weights in flight: lk_gemm_h_prefetch); along y the experts' tiles one after the other, as
  // many as the pairs could fill (each expert at most one partial tile more than its share). bench/moe_gemm_bench.cu,
  // session 17: qwen3-30b-a3b's 32 pairs an expert glu 391 -> 377 us (P 3), down 324 -> 237 (BM 128 over 64);
  // gpt-oss-20b's 64 glu 1,002 -> 747, down 549 -> 407 (BN 128); session 18 (MXFP4 unpacked to f16): glu 624 (BN 64)
  // against 515 (BN 128) at 512 rows, BN 64 ahead at 256.
  KernelCall expert_gemm(const Matrix& w, const Matrix* u, const ExpertGroups& groups, const std::string& xq,
                         const Ref& y, int rows) const {
    const size_t n = w.rows / w.experts, pairs = size_t(rows) * m_.experts_used;
    const int bn = k_.moe_tile ? k_.moe_tile : pairs >= 64 * size_t(m_.experts) ? 128 : 64;
    const bool glu = u != nullptr;
    constexpr int bm = 128;
    KernelCall c;
    c.kernel = "lk_moe_gemm_h";
    c.targs = {format_type(w.type), flag(glu), std::to_string(bn), std::to_string(bm)};
    c.grid = dims2(cdiv(n, size_t(lk_gemm_h_outputs(glu, bm))), cdiv(pairs, size_t(bn)) + m_.experts);
    c.block = dims1(32 * LK_GH_WARPS);
    c.smem = size_t(lk_gemm_h_smem(bm, bn));
    c.params = {Arg::weights(w.name),
                Arg::weights(glu ? u->name : w.name),
                Arg::pointer(place(xq), "(const __half*)"),
                ptr(groups.count),
                ptr(groups.first),
                ptr(y),
                Arg::integer(int64_t(w.cols)),
                Arg::integer(int64_t(n)),
                Arg::integer(m_.experts)};
    return c;
  }
  // lk_moe_glu<G, U, RPW(, lk_xq)> / lk_moe_glu_grouped (or lk_moe_gemm_h over the f16 copy): gate and up paired, then
  // the activation (an lk_glu_act: the experts' biases, the model's clamp).
  void add(const MoeGlu& op, std::vector<KernelCall>& out) const {
    const Matrix& g = p_.matrix(op.wg);
    const Matrix& u = p_.matrix(op.wu);
    const Arg act = Arg::aggregate(
        "lk_glu_act", {opt_ptr(op.bg), opt_ptr(op.bu), Arg::real(m_.swiglu_limit), Arg::real(m_.swiglu_alpha)});
    if (op.xq && op.groups) {
      KernelCall c = expert_gemm(g, &u, *op.groups, *op.xq, op.out, op.rows);
      c.params.push_back(act);
      c.params.push_back(Arg::null());
      out.push_back(std::move(c));
      return;
    }
    KernelCall c = expert_gemv("lk_moe_glu", {format_type(g.type), format_type(u.type)}, g,
                               {Arg::weights(g.name), Arg::weights(u.name)}, op.x, op.ids, op.out, op.rows, op.groups,
                               op.xq, op.rows);
    c.params.push_back(act);
    out.push_back(std::move(c));
  }
  // lk_moe_down<M, RPW(, lk_xq)> / lk_moe_down_grouped (or lk_moe_gemm_h), the experts' bias last.
  void add(const MoeDown& op, std::vector<KernelCall>& out) const {
    const Matrix& w = p_.matrix(op.w);
    if (op.xq && op.groups) {
      KernelCall c = expert_gemm(w, nullptr, *op.groups, *op.xq, op.out, op.rows);
      c.params.push_back(Arg::aggregate("lk_glu_act", {Arg::null(), Arg::null(), Arg::real(0.f), Arg::real(1.f)}));
      c.params.push_back(opt_ptr(op.bias));
      out.push_back(std::move(c));
      return;
    }
    KernelCall c = expert_gemv("lk_moe_down", {format_type(w.type)}, w, {Arg::weights(w.name)}, op.x, op.ids, op.out,
                               op.rows, op.groups, op.xq, op.rows * int(m_.experts_used));
    c.params.push_back(opt_ptr(op.bias));
    out.push_back(std::move(c));
  }
  // lk_moe_combine<NORM>: a block a row, the norm's threads (NORM: the next layer's add + norm after it).
  void add(const MoeCombine& op, std::vector<KernelCall>& out) const {
    KernelCall c{"lk_moe_combine", {flag(op.norm.has_value())}, dims1(op.rows), dims1(norm_threads(m_.d_model)), 0, {}};
    const Arg tail = op.norm ? Arg::aggregate("lk_norm_tail", {ptr(op.norm->x), ptr(op.norm->w), ptr(op.norm->out),
                                                               Arg::integer(m_.d_model), Arg::real(float(m_.norm_eps))})
                             : Arg::aggregate("lk_norm_tail",
                                              {Arg::null(), Arg::null(), Arg::null(), Arg::integer(0), Arg::real(0.f)});
    c.params = {ptr(op.expert_out),
                op.at ? ptr(*op.at) : Arg::null(),
                ptr(op.weights),
                Arg::integer(m_.experts_used),
                op.shared ? ptr(*op.shared) : Arg::null(),
                op.gate ? ptr(*op.gate) : Arg::null(),
                ptr(op.y),
                Arg::integer(m_.d_model),
                tail};
    out.push_back(std::move(c));
  }

  const Schedule& p_;
  const Form& f_;
  const model::Model& m_;
  const knobs::Knobs& k_;
};

}  // namespace

std::vector<KernelCall> lower(const Schedule& p, const Form& f, const Launch& l) {
  return Lowerer(p, f).lower(l);
}

}  // namespace lt::lane
