// The lane's schedule for a dense llama/qwen2/qwen3 model or a mixture of experts: its weights, carried state, sidecar
// and forms.
#include "compiler/lane_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>

#include "compiler/error.hpp"
#include "compiler/lowering.hpp"
#include "kernels/shapes.cuh"

namespace lt::lane {

namespace {

size_t round_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}
constexpr size_t kAlign = 256;

// A tensor's C name: letters, digits and underscores, after a prefix saying what it is.
std::string c_name(const std::string& prefix, const std::string& tensor) {
  std::string s = prefix;
  std::string stem = tensor;
  if (auto dot = stem.rfind(".weight"); dot != std::string::npos && dot + 7 == stem.size()) stem.resize(dot);
  for (char ch : stem) s += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return s;
}

bool supported(ggml::Type t) {
  return t == ggml::Type::Q8_0 || t == ggml::Type::F16 || t == ggml::Type::BF16 || t == ggml::Type::F32 ||
         lk_is_block(int(t));
}

// The builder of one form's launches: names its step-local buffers and records what each launch reads and writes.
class FormBuilder {
 public:
  FormBuilder(Schedule& p, Form& f) : p_(p), f_(f) {}

  Ref buf(const std::string& name, size_t count, Elem e = Elem::Act) {
    f_.buffers.try_emplace(name, Buffer{name, count, e, Life::Step});
    return Ref{name, 0};
  }

  void add(Op op, std::vector<std::string> reads, std::vector<std::string> writes, std::string kind,
           std::string output) {
    f_.launches.push_back(
        Launch{std::move(op), std::move(reads), std::move(writes), std::move(kind), std::move(output)});
  }

  Schedule& p_;
  Form& f_;
};

// A mixture layer's FFN over the rows of `h2` (the norm's output): the router's logits (a GEMV), each row's route, the
// shared expert where the model has one, the selected experts' paired gate/up and down projections, and the combine
// into `dn` in each route's order; under fuse_norm (`tail`, its add dn) the combine also adds dn to the residual and
// norms it for the next layer. Returns dn's name.
std::string build_mixture(FormBuilder& b, const model::Layer& L, const std::string& t, const Ref& h2, int R,
                          std::optional<AddNorm> tail) {
  const model::Model& m = b.p_.model;
  auto W = [&](const gguf::TensorInfo* ti) { return c_name("w_", ti->name); };
  auto V = [&](const gguf::TensorInfo* ti) { return c_name("v_", ti->name); };
  auto opt_v = [&](const gguf::TensorInfo* ti) { return ti ? std::optional(V(ti)) : std::nullopt; };
  const size_t k = m.experts_used, d = m.d_model;
  if (k > 32) throw Error("the lane routes at most 32 experts a token, not " + std::to_string(k));
  const bool shared = L.w_gate_shared != nullptr;
  Ref logits = b.buf(t + "router", R * m.experts);
  b.add(Gemv{W(L.router), h2, opt_v(L.router_bias), logits, R}, {h2.buf}, {logits.buf}, "gemv", logits.buf);
  // The shared expert's GLU next (independent of the route: side by side with it under side_streams).
  std::optional<Ref> ss, sd, gate;
  if (shared) {
    ss = b.buf(t + "shared_s", R * m.shared_ffn);
    if (b.p_.knobs.fuse_glu && L.w_gate_shared->type == L.w_up_shared->type) {
      b.add(GemvGlu{W(L.w_gate_shared), W(L.w_up_shared), h2, *ss, R}, {h2.buf}, {ss->buf}, "gemv_glu", ss->buf);
    } else {
      Ref g = b.buf(t + "shared_g", R * m.shared_ffn), u = b.buf(t + "shared_u", R * m.shared_ffn);
      b.add(Gemv{W(L.w_gate_shared), h2, std::nullopt, g, R}, {h2.buf}, {g.buf}, "gemv", g.buf);
      b.add(Gemv{W(L.w_up_shared), h2, std::nullopt, u, R}, {h2.buf}, {u.buf}, "gemv", u.buf);
      b.add(SwiGlu{g, u, *ss, R * m.shared_ffn}, {g.buf, u.buf}, {ss->buf}, "swiglu", ss->buf);
    }
  }
  Ref ids = b.buf(t + "experts", R * k, Elem::Int), weights = b.buf(t + "weights", R * k);
  std::vector<std::string> route_writes = {ids.buf, weights.buf};
  if (shared) route_writes.push_back((gate = b.buf(t + "shared_gate", R))->buf);
  b.add(MoeRoute{logits, ids, weights, shared ? std::optional(V(L.shared_gate_inp)) : std::nullopt, h2, gate, R},
        {logits.buf, h2.buf}, route_writes, "moe_route", ids.buf);
  // A chunk's pairs grouped by expert first (each expert's rows then read once a slab of its pairs); the decode step's
  // one row reads its k experts directly.
  std::optional<ExpertGroups> groups;
  Ref x = h2;
  std::vector<std::string> by_expert = {ids.buf};  // what the experts' launches read to find their rows
  if (R > 1) {
    groups =
        ExpertGroups{b.buf(t + "expert_count", m.experts, Elem::Int), b.buf(t + "expert_first", m.experts, Elem::Int),
                     b.buf(t + "expert_order", R * k, Elem::Int), b.buf(t + "expert_at", R * k, Elem::Int)};
    x = b.buf(t + "expert_x", R * k * d);
    b.add(MoeGroup{ids, *groups, h2, x, R}, {ids.buf, h2.buf},
          {groups->count.buf, groups->first.buf, groups->order.buf, groups->at.buf, x.buf}, "moe_group", x.buf);
    by_expert = {groups->count.buf, groups->first.buf};
  }
  auto with = [](std::vector<std::string> v, const std::string& more) {
    v.push_back(more);
    return v;
  };
  Ref act = b.buf(t + "expert_s", R * k * m.expert_ffn);
  b.add(MoeGlu{W(L.gate_exps), W(L.up_exps), x, ids, act, R, groups, opt_v(L.gate_exps_bias), opt_v(L.up_exps_bias)},
        with(by_expert, x.buf), {act.buf}, "moe_glu", act.buf);
  if (shared) {
    sd = b.buf(t + "shared_dn", R * d);
    b.add(Gemv{W(L.w_down_shared), *ss, std::nullopt, *sd, R}, {ss->buf}, {sd->buf}, "gemv", sd->buf);
  }
  Ref out = b.buf(t + "expert_dn", R * k * d);
  b.add(MoeDown{W(L.down_exps), act, ids, out, R, groups, opt_v(L.down_exps_bias)}, with(by_expert, act.buf), {out.buf},
        "moe_down", out.buf);
  Ref dn = b.buf(t + "dn", R * d);
  std::vector<std::string> reads = {out.buf, weights.buf}, writes = {dn.buf};
  if (groups) reads.push_back(groups->at.buf);
  if (shared) reads.insert(reads.end(), {sd->buf, gate->buf});
  if (tail) {
    reads.push_back(tail->x.buf);
    writes.insert(writes.end(), {tail->x.buf, tail->out.buf});
  }
  const std::string output = tail ? tail->out.buf : dn.buf;
  b.add(MoeCombine{out, weights, groups ? std::optional(groups->at) : std::nullopt, sd, gate, dn, R, tail}, reads,
        writes, tail ? "moe_combine_norm" : "moe_combine", output);
  return dn.buf;
}

// The splits of an attention over `rows` rows (`heads` query heads a block where the kernel takes that many): the
// attn_splits knob's for the decode step; a chunk's rows are blocks of their own, so its positions split only while
// its blocks fill fewer than the GPU's multiprocessors, at most 16 ways (which also bounds its partials). (Session
// 25: a 512-row chunk of qwen3-0.6b, 128 blocks unsplit, prefilled 7.5% slower split 4 ways and 22% 8 ways.)
int attention_splits(const Schedule& p, int rows, int heads) {
  if (rows == 1) return p.knobs.attn_splits;
  const model::Model& m = p.model;
  const size_t block_rows = size_t(lk_attention_mma_rows(mma_attention_step(m, rows)));
  const size_t blocks = mma_attention(p.knobs, rows)
                            ? m.kv_heads * ((size_t(rows) * m.group() + block_rows - 1) / block_rows)
                            : m.kv_heads * (m.group() / size_t(heads)) * size_t(rows);
  const int fill = int(std::max<size_t>(1, size_t(p.target.sms) / blocks));
  return std::min({p.knobs.attn_splits, 16, fill});
}

// Whether layer L ropes by the sliding layers' own frequencies (gemma3's; model::Model::sliding_rope).
bool own_rope(const model::Model& m, const model::Layer& L) {
  return L.sliding && m.sliding_rope();
}

// The sidecar's pairs of rope tables, in order, each by whose frequencies it holds (true: the sliding layers' own):
// only pairs some layer reads (a program declares no table no launch reads), the model's first. Rope::table is a
// layer's pair's place here.
std::vector<bool> rope_tables(const model::Model& m) {
  const auto own = [&](const model::Layer& L) { return own_rope(m, L); };
  std::vector<bool> t;
  if (!std::all_of(m.layer.begin(), m.layer.end(), own)) t.push_back(false);
  if (std::any_of(m.layer.begin(), m.layer.end(), own)) t.push_back(true);
  return t;
}

void build_form(Schedule& p, Form& f) {
  const model::Model& m = p.model;
  const int R = f.rows;
  const size_t d = m.d_model, hq = m.heads, hk = m.kv_heads, hd = m.head_dim, vd = m.value_dim, ff = m.ffn;
  FormBuilder b(p, f);
  f.token = R == 1 ? "tok" : "tok" + std::to_string(R);
  const std::string embd = p.matrix(c_name("w_", m.token_embd->name)).name;
  Ref x = b.buf("x", R * d);
  b.add(Embed{embd, Ref{f.token}, x, R, m.embed_scale}, {f.token}, {"x"}, "embed", "x");
  std::string prev_add;  // the buffer the next norm adds to the residual
  bool normed = false;   // whether the last layer's down projection already normed this layer's input (fuse_norm)
  const std::vector<bool> tables = rope_tables(m);  // (the pairs of rope tables: a layer's Rope::table its place here)
  for (uint32_t l = 0; l < m.layers; ++l) {
    const model::Layer& L = m.layer[l];
    const std::string t = "l" + std::to_string(l) + "_";
    auto W = [&](const gguf::TensorInfo* ti) { return c_name("w_", ti->name); };
    auto V = [&](const gguf::TensorInfo* ti) { return c_name("v_", ti->name); };
    auto opt_v = [&](const gguf::TensorInfo* ti) { return ti ? std::optional<std::string>(V(ti)) : std::nullopt; };
    // Attention.
    Ref h = b.buf(t + "h", R * d);
    if (!normed && prev_add.empty())  // (normed: the down projection before wrote h)
      b.add(AddNorm{x, std::nullopt, V(L.attn_norm), h, R}, {"x"}, {"x", h.buf}, "norm", h.buf);
    else if (!normed)
      b.add(AddNorm{x, Ref{prev_add}, V(L.attn_norm), h, R}, {"x", prev_add}, {"x", h.buf}, "add_norm", h.buf);
    Ref q = b.buf(t + "q", R * hq * hd), k = b.buf(t + "k", R * hk * hd), v = b.buf(t + "v", R * hk * vd);
    const std::string kc = "kc" + std::to_string(l), vc = "vc" + std::to_string(l);
    const std::vector<Gemv> parts = {Gemv{W(L.wq), h, opt_v(L.bq), q, R}, Gemv{W(L.wk), h, opt_v(L.bk), k, R},
                                     Gemv{W(L.wv), h, opt_v(L.bv), v, R}};
    // A fusion over matrices of one format only: a layer whose q, k, v (gate, up) differ keeps them apart, but for q
    // and k of one format beside a v of another (llama.cpp's Q4_K_M keeps some layers' v in Q6_K): q and k fused.
    const bool qkv = p.knobs.fuse_qkv && L.wq->type == L.wk->type && L.wq->type == L.wv->type;
    const bool qk = p.knobs.fuse_qkv && !qkv && L.wq->type == L.wk->type;
    // (fuse_qkv_mixed: such a v in the same launch, where both formats read the same input: quantized ones, or not)
    const bool mixed =
        qk && p.knobs.fuse_qkv_mixed && lk_is_quantized(int(L.wq->type)) == lk_is_quantized(int(L.wv->type));
    const bool qkv_rope = p.knobs.fuse_rope && qkv;
    const int table = int(std::find(tables.begin(), tables.end(), own_rope(m, L)) - tables.begin());  // (its pair)
    auto rope = [&](std::optional<KvAppend> append) {
      return Rope{q, k, opt_v(L.q_norm), opt_v(L.k_norm), R, std::move(append), table};
    };
    if (qkv_rope) {  // (with fuse_qkv and fuse_rope_kv)
      b.add(GemvRope{GemvParts{h, parts, R}, rope(KvAppend{k, v, kc, vc, R})}, {h.buf}, {q.buf, k.buf, v.buf, kc, vc},
            "gemv_qkv_rope", q.buf);
    } else if (qkv || mixed) {
      b.add(GemvParts{h, parts, R}, {h.buf}, {q.buf, k.buf, v.buf}, "gemv_qkv", q.buf);
    } else if (qk) {
      b.add(GemvParts{h, {parts[0], parts[1]}, R}, {h.buf}, {q.buf, k.buf}, "gemv_qk", q.buf);
      b.add(Gemv{W(L.wv), h, opt_v(L.bv), v, R}, {h.buf}, {v.buf}, "gemv", v.buf);
    } else {
      b.add(Gemv{W(L.wq), h, opt_v(L.bq), q, R}, {h.buf}, {q.buf}, "gemv", q.buf);
      b.add(Gemv{W(L.wk), h, opt_v(L.bk), k, R}, {h.buf}, {k.buf}, "gemv", k.buf);
      b.add(Gemv{W(L.wv), h, opt_v(L.bv), v, R}, {h.buf}, {v.buf}, "gemv", v.buf);
    }
    // The decode step's tensor-core attention (attn_mma 2) ropes and appends itself where rope's launch would
    // (fuse_rope_kv; under fuse_rope the projection's tail does): one launch a layer fewer (session 23: the 8B +4.3%,
    // the 0.6B +5.7%).
    const std::optional<Rope> step_rope =
        R == 1 && p.knobs.fuse_rope_kv && !qkv_rope && mma_attention(p.knobs, R) && mma_attention_step(m, R)
            ? std::optional(rope(KvAppend{k, v, kc, vc, R}))
            : std::nullopt;
    if (p.knobs.fuse_rope_kv && !qkv_rope && !step_rope) {  // (under fuse_rope the projection's tail ropes and appends)
      b.add(rope(KvAppend{k, v, kc, vc, R}), {q.buf, k.buf, v.buf}, {q.buf, k.buf, kc, vc}, "rope_kv", q.buf);
    } else if (!p.knobs.fuse_rope_kv) {
      b.add(rope(std::nullopt), {q.buf, k.buf}, {q.buf, k.buf}, "rope", q.buf);
      b.add(KvAppend{k, v, kc, vc, R}, {k.buf, v.buf}, {kc, vc}, "kv_append", kc);
    }
    Ref a = b.buf(t + "a", R * hq * vd);
    const int heads = p.knobs.attn_heads ? p.knobs.attn_heads : int(m.group());
    const int splits = attention_splits(p, R, heads);
    const std::optional<std::string> sinks = opt_v(L.sinks);
    const int window = L.sliding ? int(m.sliding_window) : 0;
    // (with step_rope the attention reads the projections' k and v too, and appends to the caches)
    std::vector<std::string> reads = {q.buf, kc, vc}, writes;
    if (step_rope) reads = {q.buf, k.buf, v.buf, kc, vc}, writes = {kc, vc};
    const char* kind = step_rope ? "attention_rope" : "attention";
    if (splits > 1) {
      Ref part = b.buf(t + "part", R * hq * splits * (vd + 2), Elem::Acc);
      if (folds_in_attention(p, R)) {  // (the step's last block a head group folds: no Fold launch)
        writes.insert(writes.begin(), {a.buf, part.buf});
        b.add(Attention{q, kc, vc, a, part, R, splits, heads, sinks, window, std::nullopt, step_rope, true}, reads,
              writes, kind, a.buf);
      } else {
        writes.insert(writes.begin(), part.buf);
        b.add(Attention{q, kc, vc, a, part, R, splits, heads, std::nullopt, window, std::nullopt, step_rope}, reads,
              writes, kind, part.buf);
        b.add(Fold{part, a, R, splits, sinks}, {part.buf}, {a.buf}, "attention_fold", a.buf);
      }
    } else {
      writes.insert(writes.begin(), a.buf);
      b.add(Attention{q, kc, vc, a, std::nullopt, R, 1, heads, sinks, window, std::nullopt, step_rope}, reads, writes,
            kind, a.buf);
    }
    Ref o = b.buf(t + "o", R * d);
    Ref h2 = b.buf(t + "h2", R * d);
    if (L.attn_post_norm) {  // (gemma3's sandwich: the projection's output normed before it joins the residual)
      if (p.knobs.fuse_norm) throw Error("fuse_norm: the layers' outputs are normed before the residual (post norms)");
      Ref on = b.buf(t + "on", R * d);
      b.add(Gemv{W(L.wo), a, opt_v(L.bo), o, R}, {a.buf}, {o.buf}, "gemv", o.buf);
      b.add(AddNorm{o, std::nullopt, V(L.attn_post_norm), on, R}, {o.buf}, {o.buf, on.buf}, "norm", on.buf);
      b.add(AddNorm{x, on, V(L.ffn_norm), h2, R}, {"x", on.buf}, {"x", h2.buf}, "add_norm", h2.buf);
    } else if (p.knobs.fuse_norm) {
      b.add(GemvNorm{Gemv{W(L.wo), a, opt_v(L.bo), o, R}, AddNorm{x, o, V(L.ffn_norm), h2, R}}, {a.buf, "x"},
            {o.buf, "x", h2.buf}, "gemv_norm", h2.buf);
    } else {
      b.add(Gemv{W(L.wo), a, opt_v(L.bo), o, R}, {a.buf}, {o.buf}, "gemv", o.buf);
      b.add(AddNorm{x, o, V(L.ffn_norm), h2, R}, {"x", o.buf}, {"x", h2.buf}, "add_norm", h2.buf);
    }
    // Feed-forward: a mixture's experts, or the dense FFN.
    if (L.router) {
      normed = p.knobs.fuse_norm && l + 1 < m.layers;
      std::optional<AddNorm> tail;
      if (normed)
        tail =
            AddNorm{x, Ref{t + "dn"}, V(m.layer[l + 1].attn_norm), b.buf("l" + std::to_string(l + 1) + "_h", R * d), R};
      prev_add = build_mixture(b, L, t, h2, R, tail);
      continue;
    }
    Ref s = b.buf(t + "s", R * ff);
    if (p.knobs.fuse_glu && L.w_gate->type == L.w_up->type) {
      b.add(GemvGlu{W(L.w_gate), W(L.w_up), h2, s, R}, {h2.buf}, {s.buf}, "gemv_glu", s.buf);
    } else {
      Ref g = b.buf(t + "g", R * ff), u = b.buf(t + "u", R * ff);
      b.add(Gemv{W(L.w_gate), h2, std::nullopt, g, R}, {h2.buf}, {g.buf}, "gemv", g.buf);
      b.add(Gemv{W(L.w_up), h2, std::nullopt, u, R}, {h2.buf}, {u.buf}, "gemv", u.buf);
      b.add(SwiGlu{g, u, s, R * ff, m.ffn_act}, {g.buf, u.buf}, {s.buf}, "swiglu", s.buf);
    }
    Ref dn = b.buf(t + "dn", R * d);
    normed = p.knobs.fuse_norm && l + 1 < m.layers;  // the last layer's add + norm is the output's, of one row
    if (normed) {
      Ref next = b.buf("l" + std::to_string(l + 1) + "_h", R * d);
      b.add(GemvNorm{Gemv{W(L.w_down), s, std::nullopt, dn, R}, AddNorm{x, dn, V(m.layer[l + 1].attn_norm), next, R}},
            {s.buf, "x"}, {dn.buf, "x", next.buf}, "gemv_norm", next.buf);
    } else {
      b.add(Gemv{W(L.w_down), s, std::nullopt, dn, R}, {s.buf}, {dn.buf}, "gemv", dn.buf);
    }
    prev_add = dn.buf;
    if (L.ffn_post_norm) {
      Ref dnn = b.buf(t + "dnn", R * d);
      b.add(AddNorm{dn, std::nullopt, V(L.ffn_post_norm), dnn, R}, {dn.buf}, {dn.buf, dnn.buf}, "norm", dnn.buf);
      prev_add = dnn.buf;
    }
  }
  // The last row alone goes on to the logits.
  const size_t last = (R - 1) * d;
  Ref hf = b.buf("hf", d);
  b.add(AddNorm{Ref{"x", last}, Ref{prev_add, last}, c_name("v_", m.output_norm->name), hf, 1}, {"x", prev_add},
        {"x", "hf"}, "add_norm", "hf");
  Ref logits = b.buf("logits", m.vocab);
  b.add(Gemv{c_name("w_", m.output->name), hf, std::nullopt, logits, 1}, {"hf"}, {"logits"}, "gemv", "logits");
  b.add(ArgMax{logits, R}, {"logits"}, {"tok", "gen", "count", "pos"}, "argmax", "tok");
  f.logits = "logits";
}

// Whether launch b depends on launch a (either order): one writes what the other reads or writes.
bool conflict(const Launch& a, const Launch& b) {
  auto meets = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    for (const std::string& n : x)
      if (std::find(y.begin(), y.end(), n) != y.end()) return true;
    return false;
  };
  return meets(a.writes, b.reads) || meets(a.writes, b.writes) || meets(b.writes, a.reads);
}

}  // namespace

// Side streams: each run of consecutive launches that do not depend on one another (at most 3: the step's stream and
// two side ones) runs side by side. A launch with a last-block tail (its kernel counts the launch's blocks in one
// device counter) stays alone.
void assign_streams(Form& f) {
  constexpr size_t kSides = 2;
  auto tailed = [](const Launch& l) {
    return std::holds_alternative<GemvNorm>(l.op) || std::holds_alternative<GemvRope>(l.op);
  };
  for (size_t i = 0; i < f.launches.size();) {
    size_t j = i + 1;
    while (!tailed(f.launches[i]) && j < f.launches.size() && j - i <= kSides && !tailed(f.launches[j]) &&
           std::none_of(f.launches.begin() + long(i), f.launches.begin() + long(j),
                        [&](const Launch& a) { return conflict(a, f.launches[j]); }))
      ++j;
    for (size_t k = i + 1; k < j; ++k) f.launches[k].stream = int(k - i);
    i = j;
  }
}

namespace {

// The activations and their quantized copy of a launch whose projection reads a copy (`quantized_input`), or nulls;
// `k` and `rows` the activations' width and rows (a chunk's logits project its last row alone).
std::pair<Ref*, std::optional<std::string>*> prequantized_input(const Schedule& p, Op& op, size_t& k, int& rows,
                                                                bool& by_row) {
  using Input = std::pair<Ref*, std::optional<std::string>*>;
  auto of = [&](const std::string& w, int r, Ref& x, std::optional<std::string>& xq) -> Input {
    const Matrix& m = p.matrix(w);
    k = m.cols;
    rows = r;
    by_row = !on_tensor_cores(p.knobs, m, r);  // (the GEMVs' copy, a step's row or a chunk's slabs, is row by row)
    if (!quantized_input(p.knobs, m, r)) return {nullptr, nullptr};
    return {&x, &xq};
  };
  return std::visit(
      [&](auto& o) -> Input {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Gemv>) return of(o.w, o.rows, o.x, o.xq);
        if constexpr (std::is_same_v<T, GemvParts>) return of(o.parts[0].w, o.rows, o.x, o.xq);
        if constexpr (std::is_same_v<T, GemvGlu>) return of(o.wg, o.rows, o.x, o.xq);
        if constexpr (std::is_same_v<T, GemvNorm>) return of(o.gemv.w, o.gemv.rows, o.gemv.x, o.gemv.xq);
        if constexpr (std::is_same_v<T, GemvRope>) return of(o.qkv.parts[0].w, o.qkv.rows, o.qkv.x, o.qkv.xq);
        if constexpr (std::is_same_v<T, MoeGlu> || std::is_same_v<T, MoeDown>) {
          const Matrix *w = nullptr, *u = nullptr;
          if constexpr (std::is_same_v<T, MoeGlu>)
            w = &p.matrix(o.wg), u = &p.matrix(o.wu);
          else
            w = &p.matrix(o.w);
          k = w->cols;
          if (!o.groups) {  // (the decode step's int8 copy: x's row for gate and up, each pair's row of act for down)
            const bool glu = std::is_same_v<T, MoeGlu>;
            rows = glu ? o.rows : o.rows * int(p.model.experts_used);
            by_row = true;
            if (o.rows != 1 || !quantized_input(p.knobs, *w, o.rows) || (u && !quantized_input(p.knobs, *u, o.rows)))
              return {nullptr, nullptr};
            return {&o.x, &o.xq};
          }
          // (the experts' f16 copy: the chunk's pairs' rows, as grouped)
          if (!experts_on_tensor_cores(p.knobs, *w, u, o.rows)) return {nullptr, nullptr};
          rows = o.rows * int(p.model.experts_used);
          by_row = false;
          return {&o.x, &o.xq};
        }
        return {nullptr, nullptr};
      },
      op);
}

// Calls f(matrices, paired with an up matrix, rows) for each launch of a projection of `op` that the lowering may put
// on the tensor cores: a matrix alone, or a fused projection's group of parts (gemm_groups).
template <class F>
void each_gemm(const Schedule& p, const Op& op, F f) {
  auto one = [&](const std::string& w, bool glu, int rows) { f(std::vector<const Matrix*>{&p.matrix(w)}, glu, rows); };
  if (auto* g = std::get_if<Gemv>(&op)) one(g->w, false, g->rows);
  if (auto* g = std::get_if<GemvNorm>(&op)) one(g->gemv.w, false, g->gemv.rows);
  if (auto* g = std::get_if<GemvGlu>(&op)) one(g->wg, true, g->rows);
  const GemvParts* parts = std::get_if<GemvParts>(&op);
  if (auto* g = std::get_if<GemvRope>(&op)) parts = &g->qkv;
  if (parts)
    for (const std::vector<const Gemv*>& group : gemm_groups(p, *parts)) {
      std::vector<const Matrix*> ms;
      for (const Gemv* g : group) ms.push_back(&p.matrix(g->w));
      f(ms, false, parts->rows);
    }
}

// Whether launch `l` lists buffer `b` among its reads, or its writes.
bool reads(const Launch& l, const std::string& b) {
  return std::find(l.reads.begin(), l.reads.end(), b) != l.reads.end();
}
bool writes(const Launch& l, const std::string& b) {
  return std::find(l.writes.begin(), l.writes.end(), b) != l.writes.end();
}

// Where the launch that last wrote x before a decode step's quantize of one row (in `out`) can write the copy of x
// itself: a norm's, an attention fold's or an attention of one split's, of one row whose output is x (the fold's a
// head's values at a time, attention's a block's heads: whole 32-blocks of them), or under glu_groups the fused
// gate/up GEMV's over short rows of a block format (its blocks a 32-group of outputs each): that launch, with the op's
// field to set; else nulls. A chunk's f16 copy (`half`, gemm_half's) its norm writes, or the fused gate/up GEMM on the
// tensor cores: the same values lk_half_rows writes, one launch and a read of x fewer.
std::pair<Launch*, std::optional<std::string>*> folds_quantize(const Schedule& p, std::vector<Launch>& out,
                                                               const Ref& x, int rows, bool half) {
  if (rows != 1 && !half) return {nullptr, nullptr};
  auto writer = std::find_if(out.rbegin(), out.rend(), [&](const Launch& l) { return writes(l, x.buf); });
  if (writer == out.rend()) return {nullptr, nullptr};
  if (auto* n = std::get_if<AddNorm>(&writer->op); n && n->rows == rows && n->out == x && !n->xq) {
    n->xq_half = half;
    return {&*writer, &n->xq};
  }
  if (half) {
    if (auto* g = std::get_if<GemvGlu>(&writer->op);
        g && g->rows == rows && g->out == x && !g->out_xq && on_tensor_cores(p.knobs, p.matrix(g->wg), rows)) {
      g->out_half = true;
      return {&*writer, &g->out_xq};
    }
    return {nullptr, nullptr};
  }
  if (auto* f = std::get_if<Fold>(&writer->op);
      f && f->rows == 1 && f->out == x && !f->xq && p.model.value_dim % 32 == 0)
    return {&*writer, &f->xq};
  if (auto* a = std::get_if<Attention>(&writer->op);  // (one split, or its own fold: blocks write whole heads)
      a && a->rows == 1 && (a->fold || (a->splits == 1 && !a->part)) && a->out == x && !a->xq &&
      p.model.value_dim % 32 == 0)
    return {&*writer, &a->xq};
  if (auto* g = std::get_if<GemvGlu>(&writer->op);  // (glu_groups: its blocks end whole 32-groups of outputs)
      g && p.knobs.glu_groups && g->rows == 1 && g->out == x && g->xq && !g->out_xq) {
    const Matrix& w = p.matrix(g->wg);
    if (lk_glu_group_units(int(w.type), w.cols, w.rows) != 0 && p.matrix(g->wu).type == w.type)
      return {&*writer, &g->out_xq};
  }
  return {nullptr, nullptr};
}

// gemm_prequant / gemv_prequant: before the first projection of an activation buffer that reads a quantized copy, one
// launch quantizes it (in the tensor cores' order for a chunk's untiled GEMMs, row by row for the decode step's GEMVs
// and gemm_tile's staged tiles); the projections after it read the copy until a launch writes the buffer again. (They
// list x among their reads too: the CPU's model of the schedule reads it.) In the decode step the norm or attention
// fold that wrote the buffer just before writes the copy too, where it can (folds_quantize: one launch fewer).
void prequantize(const Schedule& p, Form& f) {
  // (an activation buffer, the offset of the rows read, the copy's layout) -> its quantized copy, while the buffer is
  // unchanged (the layout: 0 the tensor cores' order, 1 row by row, 2 gemm_half's f16 rows; two projections of one
  // input on different kernels may want two)
  std::map<std::tuple<std::string, size_t, int>, std::string> fresh;
  std::vector<Launch> out;
  for (Launch& l : f.launches) {
    size_t k = 0;
    int rows = 0;
    bool by_row = false;  // (the copy's layout: row by row, else the tensor cores' order)
    if (auto [x, xq] = prequantized_input(p, l.op, k, rows, by_row); x) {
      // (gemm_half's copies are a chunk's, for the tensor cores; the GEMVs', row by row, int8 ones)
      const bool half = p.knobs.gemm_half && !by_row;
      const std::tuple<std::string, size_t, int> from = {x->buf, x->offset, half ? 2 : by_row ? 1 : 0};
      auto it = fresh.find(from);
      if (it == fresh.end()) {
        std::string name = "xq_" + x->buf + (x->offset ? "_at" + std::to_string(x->offset) : "");
        if (std::any_of(fresh.begin(), fresh.end(), [&](const auto& e) { return e.second == name; }))
          name += by_row ? "_rows" : "_tc";
        const size_t words = quantized_words(p.knobs, rows, k, half);
        Buffer& b = f.buffers.try_emplace(name, Buffer{name, words, Elem::Int, Life::Step}).first->second;
        b.count = std::max(b.count, words);  // (a name another layout held before: room for either)
        if (auto [writer, in] = folds_quantize(p, out, *x, rows, half); in) {
          *in = name;
          writer->writes.push_back(name);
        } else {
          out.push_back(Launch{QuantizeI8{*x, name, rows, k, !by_row && p.knobs.gemm_tile == 0 && !half, half},
                               {x->buf},
                               {name},
                               half ? "half" : "quantize",
                               name});
        }
        it = fresh.emplace(from, name).first;
      }
      *xq = it->second;
      l.reads.push_back(it->second);
    }
    out.push_back(std::move(l));
    for (const std::string& w : out.back().writes)
      std::erase_if(fresh, [&](const auto& e) { return std::get<0>(e.first) == w; });
  }
  f.launches = std::move(out);
}

// A chunk's fused gate/up GEMM writing its output's f16 copy (out_half) writes that copy alone where no launch after it
// reads the output but through the copy (the down projection on the tensor cores lists both: prequantize), so that
// its f32 values are neither stored nor given arena space (the 8B's 29 MB a chunk of 512): the launches' lists drop
// the output, the GEMM takes a null in its place (half_only).
void half_only_outputs(Form& f) {
  for (size_t i = 0; i < f.launches.size(); ++i) {
    auto* g = std::get_if<GemvGlu>(&f.launches[i].op);
    if (!g || !g->out_half || !g->out_xq) continue;
    // (the launches that see this value of the output: up to and with the next that writes it, which may read it too)
    size_t end = i + 1;
    bool only = true;
    for (; end < f.launches.size(); ++end) {
      const Launch& r = f.launches[end];
      if (reads(r, g->out.buf) && !reads(r, *g->out_xq)) only = false;
      if (!only || writes(r, g->out.buf)) break;
    }
    if (!only) continue;
    g->half_only = true;
    std::erase(f.launches[i].writes, g->out.buf);
    for (size_t j = i + 1; j <= end && j < f.launches.size(); ++j) std::erase(f.launches[j].reads, g->out.buf);
  }
}

// norm_fold: in the decode step, each add + norm whose residual add is the plain projection just before it (o, down),
// whose quantized copy it writes (prequantize: folds_quantize) and whose output no launch reads but through that copy
// (the projections' lists name both), folds into that projection (GemvNorm with spans): the launch's spans of 128
// values each end in their last block (norm_fold_groups: each 32-group in its own block), which adds the span to the
// residual and writes the copy of x * w unscaled with each 32-group's sum of squares; the projections reading the copy
// read the sums too and scale by the norm's 1 / rms.
void fold_norms(const Schedule& p, Form& f) {
  const size_t d = p.model.d_model;
  if (f.rows != 1 || d % LK_NORM_SPAN != 0 || d / LK_NORM_SPAN > LK_NORM_SPANS_MAX) return;
  auto projects = [](const Op& op) {  // (the kernels that scale a folded copy's sums: lk_gemv_sums's callers)
    return std::holds_alternative<Gemv>(op) || std::holds_alternative<GemvParts>(op) ||
           std::holds_alternative<GemvGlu>(op) || std::holds_alternative<GemvRope>(op);
  };
  std::vector<Launch> out;
  std::map<std::string, std::string> folded;  // a folded copy -> the norm output it stands for
  for (size_t i = 0; i < f.launches.size(); ++i) {
    Launch& l = f.launches[i];
    const auto* n = std::get_if<AddNorm>(&l.op);
    const Gemv* g = !out.empty() ? std::get_if<Gemv>(&out.back().op) : nullptr;
    bool fold = n && n->add && n->xq && n->rows == 1 && g && g->rows == 1 && g->y == *n->add &&
                p.matrix(g->w).rows == d && !f.span_sums.count(*n->xq);
    for (size_t j = i + 1; fold && j < f.launches.size(); ++j) {
      const Launch& r = f.launches[j];
      if (reads(r, n->out.buf) && (!reads(r, *n->xq) || !projects(r.op))) fold = false;
      if (writes(r, n->out.buf)) break;
    }
    if (!fold) {
      out.push_back(std::move(l));
      continue;
    }
    const std::string spans = "spans_" + *n->xq;
    f.buffers.try_emplace(spans, Buffer{spans, d / 32, Elem::Acc, Life::Step});
    f.span_sums[*n->xq] = spans;
    folded[*n->xq] = n->out.buf;
    Launch& at = out.back();
    at.op = GemvNorm{*g, *n, spans};
    for (const std::string& b : {n->x.buf, *n->xq, spans})
      if (!writes(at, b)) at.writes.push_back(b);
    if (!reads(at, n->x.buf)) at.reads.push_back(n->x.buf);
    at.kind = "gemv_fold";
  }
  // The projections reading a folded copy read its spans' sums, and not the norm's output, which no launch writes.
  for (Launch& l : out)
    for (const auto& [xq, spans] : f.span_sums)
      if (reads(l, xq)) {
        l.reads.push_back(spans);
        std::erase(l.reads, folded.at(xq));
      }
  f.launches = std::move(out);
}

}  // namespace

int int8_words(const knobs::Knobs& k) {
  return k.numerics == knobs::Numerics::Int8 ? 1 : k.numerics == knobs::Numerics::Int8x2 ? 2 : 0;
}

bool on_tensor_cores(const knobs::Knobs& k, const Matrix& w, int rows) {
  if (rows < 16 || rows % 16) return false;
  // (every format but f32, lk_gemm_h: a checkpoint keeps in f32 what it wants exact, such as a mixture's router)
  if (k.gemm_half) return k.numerics != knobs::Numerics::Precise && w.type != ggml::Type::F32;
  if (int8_words(k) == 0) return false;
  // (a block format's GEMM reads the chunk's quantized copy: gemm_prequant)
  return w.type == ggml::Type::Q8_0 || (lk_is_block(int(w.type)) && k.gemm_prequant);
}

namespace {

// half_gemm_shape's rule over the matrices of one launch (one, or a group of one input and format).
HalfGemm half_gemm_shape_of(const Schedule& p, const std::vector<const Matrix*>& ws, bool glu, int rows) {
  HalfGemm h;
  const int sms = p.target.sms;
  const Matrix& w = *ws.front();
  size_t n = 0;
  for (const Matrix* m : ws) n += m->rows;
  // On Hopper the large GEMMs of chunks of 512 rows or more take lk_gemm_w (wgmma: the next stage's weights unpacked
  // while the tensor cores multiply; two warpgroups a block, 128 of k a stage, 128 activation rows). Measured alone on
  // the H200 (bench/gemm_bench.cu, bench/NOTES.md session 24) at the 8B's shapes and 512 rows: q 70 against lk_gemm_h's
  // 103 us, down 226-274 against 347-392, gate/up 467-494 against 509-518; slower on narrow (n 1,024) or short (k
  // 1,024) ones and at 256 rows, which keep lk_gemm_h. (A narrow matrix grouped with a wide one, as k and v with q,
  // is as wide as the group: its tiles are lk_gemm_w's too.)
  // The fused gate/up GEMM, and one whose rows are long (k 8,192 or more: the 8B's down), take tiles of 256
  // activation rows by 64 of k a stage (half the unpacking and the weights' reads a product; gemm_bench on an H100,
  // session 46: the 8B's gate/up 455 -> 373-384 us, its Q4_K down 208 -> 170-179, qwen3-0.6b's gate/up in Q8_0 39 ->
  // 29 us; the 8B's q 63-66 us either way, so the others keep 128 by 128).
  const bool wide = ws.size() == 1 && (glu || w.cols >= 8192);
  const bool wgmma = p.target.arch == 90 && rows >= 512 && (wide || (n >= 4096 && w.cols >= 4096));
  if (wgmma)
    h.wgs = 2, h.ks = wide ? 64 : 128, h.bm = 64 * h.wgs;
  else
    h.bm = glu ? 128 : 64;
  const size_t out = size_t(wgmma ? lk_gemm_w_outputs(glu, h.wgs) : lk_gemm_h_outputs(glu, h.bm));
  size_t gx = 0;
  for (const Matrix* m : ws) gx += (m->rows + out - 1) / out;
  auto tiles = [&](int bn) { return gx * ((size_t(rows) + size_t(bn) - 1) / size_t(bn)); };
  h.bn = wgmma && wide ? 256 : wgmma || (rows > 64 && (glu || 2 * tiles(128) > size_t(sms))) ? 128 : 64;
  h.gx = gx;
  h.gy = (size_t(rows) + size_t(h.bn) - 1) / size_t(h.bn);
  const int stages = wgmma ? int((w.cols + size_t(h.ks) - 1) / size_t(h.ks)) : lk_gemm_h_stages(int(w.cols), h.bm);
  const int per_sm = wgmma ? lk_gemm_w_blocks(h.bn, h.wgs, h.ks) : h.bm * h.bn <= 64 * 64 ? 2 : 1;
  const long all = long(tiles(h.bn)), slots = long(sms) * per_sm;
  if (!p.knobs.side_streams)
    h.split = ws.size() > 1 ? lk_gemm_tail_split(all, stages, int(slots)) : lk_gemm_h_split(all, stages, int(slots));
  h.full = h.split == 1 ? size_t(all) : ws.size() > 1 ? size_t(all - all % slots) : 0;
  return h;
}

}  // namespace

HalfGemm half_gemm_shape(const Schedule& p, const Matrix& w, bool glu, int rows) {
  return half_gemm_shape_of(p, {&w}, glu, rows);
}

HalfGemm half_gemm_shape(const Schedule& p, const std::vector<const Matrix*>& group, int rows) {
  return half_gemm_shape_of(p, group, false, rows);
}

std::vector<std::vector<const Gemv*>> gemm_groups(const Schedule& p, const GemvParts& op) {
  std::vector<std::vector<const Gemv*>> out;
  for (const Gemv& g : op.parts) {
    const Matrix& w = p.matrix(g.w);
    const bool joins = !out.empty() && p.knobs.gemm_half && on_tensor_cores(p.knobs, w, op.rows) &&
                       on_tensor_cores(p.knobs, p.matrix(out.back().front()->w), op.rows) &&
                       p.matrix(out.back().front()->w).type == w.type;
    if (joins)
      out.back().push_back(&g);
    else
      out.push_back({&g});
  }
  return out;
}

bool experts_on_tensor_cores(const knobs::Knobs& k, const Matrix& w, const Matrix* u, int rows) {
  return k.gemm_half && on_tensor_cores(k, w, rows) && (!u || u->type == w.type);
}

bool quantized_input(const knobs::Knobs& k, const Matrix& w, int rows) {
  if ((k.gemm_prequant || k.gemm_half) && on_tensor_cores(k, w, rows)) return true;
  // (the GEMVs: the decode step's row, and a chunk's rows where they run as GEMV slabs)
  return k.gemv_prequant && int8_words(k) > 0 && lk_is_quantized(int(w.type)) &&
         !on_tensor_cores(k, w, rows);
}

size_t quantized_words(const knobs::Knobs& kn, int rows, size_t k, bool half) {
  if (half) return size_t(rows) * k / 2;                      // (f16 values)
  return size_t(int8_words(kn)) * size_t(rows) * k * 9 / 32;  // a byte a value and 4 bytes a 32-block
}

std::pair<int, int> group_of(const Form& f, int i) {
  int first = i, last = i;
  while (first > 0 && f.launches[first].stream != 0) --first;
  while (last + 1 < int(f.launches.size()) && f.launches[last + 1].stream != 0) ++last;
  return {first, last};
}

uint64_t Matrix::device_bytes() const {
  if (type == ggml::Type::Q8_0) return round_up(rows * cols, kAlign) + round_up(rows * (cols / 32) * 2, kAlign);
  if (lk_is_block(int(type))) {  // its planes, each carved apart (kernels/host_memory.cuh's lk_upload_blocks)
    uint64_t bytes = 0;
    for (int plane = 0; plane < 4; ++plane) bytes += round_up(lk_plane_bytes(int(type), plane, rows * cols), kAlign);
    return bytes;
  }
  const size_t elem = type == ggml::Type::F32 ? 4 : 2;
  return round_up(rows * cols * elem, kAlign);
}

size_t Schedule::act_bytes() const {
  return knobs.numerics == knobs::Numerics::Precise ? 8 : 4;
}

size_t Schedule::elem_bytes(Elem e) const {
  switch (e) {
    case Elem::Int:
      return 4;
    case Elem::Kv:
      return knobs.kv_cache == knobs::KvCache::Act ? act_bytes() : knobs.kv_cache == knobs::KvCache::Q8_0 ? 1 : 2;
    default:
      return act_bytes();
  }
}

size_t Schedule::bytes_of(const Buffer& b) const {
  if (b.elem == Elem::Kv) return knobs::kv_cache_bytes(knobs.kv_cache, b.count, act_bytes());
  return b.count * (b.elem == Elem::Int ? 4 : act_bytes());
}

const Matrix& Schedule::matrix(const std::string& name) const {
  for (const Matrix& m : matrices)
    if (m.name == name) return m;
  throw Error("the lane's schedule has no matrix " + name);
}

void pack_arena(Form& f, const Schedule& p) {
  std::map<std::string, Slot> live;
  for (int i = 0; i < static_cast<int>(f.launches.size()); ++i) {
    const auto [first, last] = group_of(f, i);
    for (const auto* names : {&f.launches[i].reads, &f.launches[i].writes})
      for (const std::string& n : *names) {
        if (!f.buffers.count(n)) continue;
        auto [it, fresh] = live.try_emplace(n, Slot{0, 0, first, last});
        it->second.first = std::min(it->second.first, first);
        it->second.last = std::max(it->second.last, last);
      }
  }
  std::vector<std::string> order;
  for (auto& [n, s] : live) {
    s.bytes = round_up(p.bytes_of(f.buffers.at(n)), kAlign);
    order.push_back(n);
  }
  std::stable_sort(order.begin(), order.end(), [&](auto& a, auto& b) { return live[a].bytes > live[b].bytes; });
  std::vector<std::string> placed;
  size_t top = 0;
  for (const std::string& n : order) {
    Slot& s = live[n];
    // The lowest offset clear of every placed buffer whose life overlaps this one's.
    std::vector<std::pair<size_t, size_t>> taken;
    for (const std::string& o : placed) {
      const Slot& t = live[o];
      if (t.first <= s.last && s.first <= t.last) taken.push_back({t.offset, t.offset + t.bytes});
    }
    std::sort(taken.begin(), taken.end());
    size_t at = 0;
    for (auto [lo, hi] : taken) {
      if (at + s.bytes <= lo) break;
      at = std::max(at, hi);
    }
    s.offset = at;
    top = std::max(top, at + s.bytes);
    placed.push_back(n);
  }
  f.slots = std::move(live);
  f.arena_bytes = top;
}

Schedule schedule(const gguf::File& file, const model::Model& m, const knobs::Knobs& k, const knobs::Target& t) {
  knobs::Target target = t;  // (the knobs carry the context: the space's one value of it)
  target.context = k.context;
  knobs::space(m, target).check(k);
  Schedule p;
  p.model = m;
  p.knobs = k;
  p.target = target;
  p.ctx = knobs::lane_context(m, k);
  (void)file;

  std::set<std::string> seen;
  auto add_matrix = [&](const gguf::TensorInfo* ti) {
    std::string name = c_name("w_", ti->name);
    if (!seen.insert(name).second) return;
    if (!supported(ti->type))
      throw Error("tensor " + ti->name + " is " + std::string(ggml::traits_of(ti->type).name) +
                  ": the lane reads matrices in q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, mxfp4, "
                  "iq4_nl, iq4_xs, f16, bf16 and f32");
    const uint64_t width = lk_is_block(int(ti->type)) ? uint64_t(lk_block_elems(int(ti->type))) : 32;
    const size_t experts = ti->dims.size() == 3 ? ti->dims[2] : 1;  // (a mixture's expert tensor: every expert's rows)
    if (ti->dims.size() < 2 || ti->dims.size() > 3 || ti->dims[0] % width != 0)
      throw Error("tensor " + ti->name +
                  ": the lane needs a 2-D matrix (or 3-D experts) whose rows are a multiple of " +
                  std::to_string(width) + " wide");
    p.matrices.push_back(Matrix{name, ti, ti->dims[1] * experts, ti->dims[0], ti->type, experts});
  };
  auto add_vector = [&](const gguf::TensorInfo* ti) {
    if (!ti) return;
    if (ti->type != ggml::Type::F32) throw Error("tensor " + ti->name + " must be f32 for the lane");
    std::string name = c_name("v_", ti->name);
    if (seen.insert(name).second) p.vectors.push_back(Vector{name, ti, ti->elements()});
  };
  add_matrix(m.token_embd);
  add_matrix(m.output);
  add_vector(m.output_norm);
  for (const model::Layer& L : m.layer) {
    for (auto* ti : {L.wq, L.wk, L.wv, L.wo, L.w_gate, L.w_up, L.w_down, L.router, L.gate_exps, L.up_exps, L.down_exps,
                     L.w_gate_shared, L.w_up_shared, L.w_down_shared})
      if (ti) add_matrix(ti);
    for (auto* ti :
         {L.attn_norm, L.ffn_norm, L.attn_post_norm, L.ffn_post_norm, L.bq, L.bk, L.bv, L.bo, L.q_norm, L.k_norm,
          L.sinks, L.router_bias, L.shared_gate_inp, L.gate_exps_bias, L.up_exps_bias, L.down_exps_bias})
      add_vector(ti);
  }
  // Under --device-bytes the largest matrices move to host memory first.
  std::stable_sort(p.matrices.begin(), p.matrices.end(),
                   [](const Matrix& a, const Matrix& b) { return a.device_bytes() > b.device_bytes(); });

  // The sidecar: rope's cosine and sine tables, [position][pair], in the lane's activation type, a pair each of
  // rope_tables: the model's frequencies and (YaRN) its attention factor on both, as the reference rotates, or the
  // sliding layers' own (gemma3; named _swa beside the model's).
  const size_t half = m.head_dim / 2, n = static_cast<size_t>(p.ctx) * half, ab = p.act_bytes();
  auto tables = [&](const std::vector<double>& inv, double factor, const std::string& suffix) {
    const size_t base = p.sidecar.size();
    p.sidecar.resize(base + 2 * n * ab);
    for (size_t pos = 0; pos < static_cast<size_t>(p.ctx); ++pos)
      for (size_t j = 0; j < half; ++j) {
        const double th = static_cast<double>(pos) * inv[j];
        double c = std::cos(th), s = std::sin(th);
        if (factor != 1.0) c *= factor, s *= factor;
        const size_t at = pos * half + j;
        if (ab == 8) {
          std::memcpy(&p.sidecar[base + at * 8], &c, 8);
          std::memcpy(&p.sidecar[base + (n + at) * 8], &s, 8);
        } else {
          const float cf = static_cast<float>(c), sf = static_cast<float>(s);
          std::memcpy(&p.sidecar[base + at * 4], &cf, 4);
          std::memcpy(&p.sidecar[base + (n + at) * 4], &sf, 4);
        }
      }
    p.side.push_back(SideArray{"c_rope_cos" + suffix, base, n});
    p.side.push_back(SideArray{"c_rope_sin" + suffix, base + n * ab, n});
  };
  const std::vector<bool> kinds = rope_tables(m);
  for (size_t i = 0; i < kinds.size(); ++i)
    tables(m.rope_inv_freq(kinds[i]), kinds[i] ? 1.0 : m.rope_attention_factor(), i ? "_swa" : "");

  // The carried state.
  auto carry = [&](const std::string& name, size_t count, Elem e) {
    p.carried.emplace(name, Buffer{name, count, e, Life::Carried});
  };
  for (uint32_t l = 0; l < m.layers; ++l) {
    carry("kc" + std::to_string(l), size_t(m.kv_heads) * p.ctx * m.head_dim, Elem::Kv);
    carry("vc" + std::to_string(l), size_t(m.kv_heads) * p.ctx * m.value_dim, Elem::Kv);
  }
  for (const char* s : {"pos", "tok", "count"}) carry(s, 1, Elem::Int);
  carry("gen", p.ctx, Elem::Int);
  carry("prompt", p.ctx, Elem::Int);

  // The forms: the decode step, then the chunks, largest first.
  std::vector<int> rows = {1};
  for (int c : k.chunks()) rows.push_back(c);
  for (int r : rows) {
    if (r > 1) carry("tok" + std::to_string(r), r, Elem::Int);
    Form f;
    f.rows = r;
    build_form(p, f);
    if (k.gemm_prequant || k.gemv_prequant || k.gemm_half) prequantize(p, f);
    if (k.gemm_half) half_only_outputs(f);
    if (k.norm_fold) fold_norms(p, f);
    if (k.side_streams) assign_streams(f);
    pack_arena(f, p);
    p.arena_bytes = std::max(p.arena_bytes, f.arena_bytes);
    p.forms.push_back(std::move(f));
  }
  // gemm_half's split GEMMs: their parts' sums (the largest launch's) and a count a tile, zero between launches.
  size_t part = 0, tiles = 0;
  for (const Form& f : p.forms)
    for (const Launch& l : f.launches)
      each_gemm(p, l.op, [&](const std::vector<const Matrix*>& ms, bool glu, int r) {
        if (!k.gemm_half || !on_tensor_cores(k, *ms.front(), r)) return;
        if (const HalfGemm h = ms.size() > 1 ? half_gemm_shape(p, ms, r) : half_gemm_shape(p, *ms.front(), glu, r);
            h.split > 1)
          part = std::max(part, h.workspace()), tiles = std::max(tiles, h.split_tiles());
      });
  if (part) carry("gemm_part", part, Elem::Act), carry("gemm_count", tiles, Elem::Int);
  // The decode step's attention with its own fold: a count a key/value head, zero between launches.
  if (k.attn_splits > 1 && folds_in_attention(p, 1)) carry("attn_count", m.kv_heads, Elem::Int);
  return p;
}

}  // namespace lt::lane
