// A CPU execution of a lane's schedule: every launch's semantics run over the schedule's own arena (poisoned with NaN
// as the program poisons it), carried state and sidecar, driven as the program drives its forms. It checks the schedule
// — the arena packed by liveness, the wiring of the fused launches, the chunks, the attention's splits and fold —
// against the CPU reference without a GPU; the CUDA kernels themselves are checked on the GPU by bench/first_light.sh.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "compiler/ggml_types.hpp"
#include "compiler/gguf.hpp"
#include "compiler/lane_schedule.hpp"
#include "compiler/lowering.hpp"
#include "compiler/reference.hpp"
#include "kernels/shapes.cuh"

namespace lt::test {

// T: the lane's activation type (float under dequant, double under precise), as the arena's layout assumes.
template <class T>
class LaneSim {
 public:
  LaneSim(const gguf::File& file, const lane::Schedule& schedule)
      : file_(file),
        p_(schedule),
        m_(schedule.model),
        words_(schedule.knobs.numerics == knobs::Numerics::Int8     ? 1
               : schedule.knobs.numerics == knobs::Numerics::Int8x2 ? 2
                                                                    : 0) {
    arena_.assign(p_.arena_bytes, 0xff);
    for (const auto& [name, b] : p_.carried) carried_[name].assign(b.count * 8, 0);  // room for any element type
    for (const lane::Matrix& w : p_.matrices) {
      auto& d = weights_[w.name];
      d.resize(w.rows * w.cols);
      ggml::dequantize(w.type, file.data(*w.tensor).data(), d);
    }
    for (const lane::Vector& v : p_.vectors) {
      auto& d = vectors_[v.name];
      d.resize(v.n);
      std::memcpy(d.data(), file.data(*v.tensor).data(), v.n * 4);
    }
  }

  // Prefills `prompt` in the largest chunks that fit, then generates: as reference::Reference::generate.
  reference::Generation generate(const std::vector<int32_t>& prompt, int n_gen) {
    ints("pos")[0] = 0;
    ints("count")[0] = 0;
    reference::Generation g;
    const lane::Form* last = nullptr;
    for (size_t at = 0; at < prompt.size();) {
      const lane::Form* f = &p_.forms.front();
      for (const lane::Form& c : p_.forms)
        if (c.rows > f->rows && size_t(c.rows) <= prompt.size() - at) f = &c;
      int* tok = ints(f->token);
      for (int r = 0; r < f->rows; ++r) tok[r] = prompt[at + r];
      run(*f);
      last = f;
      at += f->rows;
    }
    dump(*last, g.logits);
    for (int i = 1; i < n_gen; ++i) {
      run(p_.forms.front());
      dump(p_.forms.front(), g.logits);
    }
    const int* gen = ints("gen");
    const int count = ints("count")[0];
    g.tokens.assign(gen + count - n_gen, gen + count);
    return g;
  }

 private:
  int* ints(const std::string& carried) { return reinterpret_cast<int*>(carried_.at(carried).data()); }
  // The int elements of a buffer of form `f` (an Elem::Int one: a mixture's expert ids and groups).
  int* ints(const lane::Form& f, const lane::Ref& r) { return reinterpret_cast<int*>(act(f, r)); }

  // The elements of a buffer of form `f` (step-local: its arena slot; else carried) from `r.offset`.
  T* act(const lane::Form& f, const lane::Ref& r) {
    auto slot = f.slots.find(r.buf);
    if (auto s = scratch_.find(r.buf); slot == f.slots.end() && s != scratch_.end()) return s->second.data() + r.offset;
    T* base = slot != f.slots.end() ? reinterpret_cast<T*>(arena_.data() + slot->second.offset)
                                    : reinterpret_cast<T*>(carried_.at(r.buf).data());
    return base + r.offset;
  }
  T* act(const lane::Form& f, const std::string& name) { return act(f, lane::Ref{name, 0}); }
  const T* side(size_t i) const { return reinterpret_cast<const T*>(p_.sidecar.data() + p_.side[i].offset); }

  void dump(const lane::Form& f, std::vector<float>& out) {
    const T* l = act(f, f.logits);
    for (uint32_t i = 0; i < m_.vocab; ++i) out.push_back(float(l[i]));
  }

  // The int8 numerics' view of activations: each 32-block as the sum of `words_` int8 words times their scales, by
  // the kernels' rule (kernels/formats.cuh: d = max|x| / 127 in f32, q = x * (127 / max|x|) rounded to the nearest,
  // ties to even).
  std::vector<double> int8_view(const T* x, size_t n) const {
    std::vector<double> out(n, 0.0);
    for (size_t b = 0; b < n; b += 32) {
      float v[32];
      for (size_t i = 0; i < 32; ++i) v[i] = float(x[b + i]);
      for (int word = 0; word < words_; ++word) {
        float amax = 0.f;
        for (float e : v) amax = std::max(amax, std::fabs(e));
        const float d = amax / 127.f, inv = amax > 0.f ? 127.f / amax : 0.f;
        for (size_t i = 0; i < 32; ++i) {
          const float q = std::nearbyint(v[i] * inv);
          out[b + i] += double(d) * double(q);
          v[i] -= d * q;
        }
      }
    }
    return out;
  }

  // Where a QuantizeI8 buffer as lk_quantize_i8 lays it out keeps word `word`'s value of row r, column i (of rows x k),
  // and its 32-block's f32 scale. A chunk's copy (in the tensor cores' order): the values [words][rows / 8][k / 32][32
  // lanes][8 bytes], lane 4 (r % 8) + t holding bytes 8t .. 8t + 7 of its row's 32-block, then the scales [words][rows
  // / 8][k / 32][8]; by row (the decode step's, gemm_tile's): the values [words][rows][k], then the scales
  // [words][rows][k / 32].
  static size_t quantized_value_at(bool by_row, int word, int rows, int r, size_t k, size_t i) {
    if (by_row) return (size_t(word) * rows + r) * k + i;
    return quantized_group_block(word, rows, r, k, i) * 256 + size_t(r % 8) * 32 + i % 32;
  }
  static size_t quantized_scale_at(bool by_row, int word, int rows, int r, size_t k, size_t i) {
    if (by_row) return (size_t(word) * rows + r) * (k / 32) + i / 32;
    return quantized_group_block(word, rows, r, k, i) * 8 + size_t(r % 8);
  }
  static size_t quantized_group_block(int word, int rows, int r, size_t k, size_t i) {
    return (size_t(word) * size_t(rows / 8) + size_t(r / 8)) * (k / 32) + i / 32;
  }
  signed char* quantized_values(const lane::Form& f, const std::string& xq) {
    return reinterpret_cast<signed char*>(act(f, lane::Ref{xq, 0}));
  }
  float* quantized_scales(const lane::Form& f, const std::string& xq, int rows, size_t k) {
    return reinterpret_cast<float*>(quantized_values(f, xq) + size_t(words_) * rows * k);
  }
  float& quantized_scale(const lane::Form& f, const std::string& xq, int word, int rows, int r, size_t k, size_t i) {
    return quantized_scales(f, xq, rows, k)[quantized_scale_at(by_row_.at(xq), word, rows, r, k, i)];
  }
  // Row r of such a buffer as the values its words sum to.
  std::vector<double> quantized(const lane::Form& f, const std::string& xq, int rows, int r, size_t k) {
    const signed char* q = quantized_values(f, xq);
    std::vector<double> out(k, 0.0);
    for (int word = 0; word < words_; ++word)
      for (size_t i = 0; i < k; ++i)
        out[i] += double(quantized_scale(f, xq, word, rows, r, k, i)) *
                  double(q[quantized_value_at(by_row_.at(xq), word, rows, r, k, i)]);
    return out;
  }

  // y[r][j] = W[j] . x[r] (+ bias), sums in double, stored as T; under the int8 numerics x as int8_view sees it
  // where W is Q8_0 (read from its QuantizeI8 copy when the projection has one) or a block format (whose kernels
  // quantize by the same rule and sum its codes in integers: the same products, up to f32 rounding).
  void gemv(const lane::Form& f, const lane::Gemv& g) {
    const lane::Matrix& w = p_.matrix(g.w);
    const std::vector<float>& W = weights_.at(w.name);
    const bool half = p_.knobs.gemm_half && lane::on_tensor_cores(p_.knobs, w, g.rows);
    // (a projection of the int8 copy reads the copy alone: under norm_fold x itself is never written)
    const bool copy = !half && g.xq && words_ && (w.type == ggml::Type::Q8_0 || lk_is_block(int(w.type)));
    // (and one on the tensor cores its f16 copy alone: a chunk's gate/up GEMM may not store x itself, half_only)
    const T* x = copy || half ? nullptr : act(f, g.x);
    T* y = act(f, g.y);
    const std::vector<float>& Wh = half ? weights_half(w) : W;
    for (int r = 0; r < g.rows; ++r) {
      std::vector<double> xr =
          x ? std::vector<double>(x + r * w.cols, x + (r + 1) * w.cols) : std::vector<double>(w.cols);
      if (half) {  // (lk_gemm_h: the f16 copy of x, the weights rounded to f16)
        const uint16_t* xh = reinterpret_cast<const uint16_t*>(act(f, lane::Ref{*g.xq, 0})) + size_t(r) * w.cols;
        for (size_t i = 0; i < w.cols; ++i) xr[i] = double(ggml::f16_to_f32(xh[i]));
      } else if (words_ && (w.type == ggml::Type::Q8_0 || lk_is_block(int(w.type)))) {
        xr = g.xq ? quantized(f, *g.xq, g.rows, r, w.cols) : int8_view(x + r * w.cols, w.cols);
        if (auto s = g.xq ? f.span_sums.find(*g.xq) : f.span_sums.end(); s != f.span_sums.end()) {
          // (norm_fold: the copy of x * w unscaled; the sums times the norm's 1 / rms from its spans' sums)
          const T* spans = act(f, lane::Ref{s->second, 0});
          double ss = 0;
          for (size_t i = 0; i < w.cols / 32; ++i) ss += double(spans[i]);
          const double scale = 1.0 / std::sqrt(ss / double(w.cols) + double(m_.norm_eps));
          for (double& v : xr) v *= scale;
        }
      }
      for (size_t j = 0; j < w.rows; ++j) {
        double s = g.bias ? vectors_.at(*g.bias)[j] : 0.0;
        for (size_t i = 0; i < w.cols; ++i) s += double(Wh[j * w.cols + i]) * xr[i];
        y[r * w.rows + j] = T(s);
      }
    }
  }

  // A matrix's dequantized weights rounded to f16 (gemm_half's tiles), made once.
  const std::vector<float>& weights_half(const lane::Matrix& w) {
    auto [it, fresh] = weights_half_.try_emplace(w.name);
    if (fresh)
      for (float v : weights_.at(w.name)) it->second.push_back(ggml::f16_to_f32(ggml::f32_to_f16(v)));
    return it->second;
  }

  void run(const lane::Form& f) {
    for (const lane::Launch& l : f.launches) std::visit([&](const auto& op) { exec(f, op); }, l.op);
  }

  void exec(const lane::Form& f, const lane::Embed& e) {
    const std::vector<float>& W = weights_.at(e.table);
    const int* tok = reinterpret_cast<const int*>(carried_.at(e.tok.buf).data());
    T* out = act(f, e.out);
    for (int r = 0; r < e.rows; ++r)
      for (size_t i = 0; i < m_.d_model; ++i) out[r * m_.d_model + i] = T(W[size_t(tok[r]) * m_.d_model + i] * e.scale);
  }
  void exec(const lane::Form& f, const lane::AddNorm& n) {
    T* x = act(f, n.x);
    const T* add = n.add ? act(f, *n.add) : nullptr;
    T* out = act(f, n.out);
    const std::vector<float>& w = vectors_.at(n.w);
    const size_t d = m_.d_model;
    for (int r = 0; r < n.rows; ++r) {
      double ss = 0;
      for (size_t i = 0; i < d; ++i) {
        if (add) x[r * d + i] = T(double(x[r * d + i]) + double(add[r * d + i]));
        ss += double(x[r * d + i]) * double(x[r * d + i]);
      }
      const double s = 1.0 / std::sqrt(ss / double(d) + double(m_.norm_eps));
      for (size_t i = 0; i < d; ++i) out[r * d + i] = T(double(x[r * d + i]) * s * double(w[i]));
    }
    if (n.xq) exec(f, lane::QuantizeI8{n.out, *n.xq, n.rows, d, false, n.xq_half});  // (the launch writes it too)
  }
  void exec(const lane::Form& f, const lane::Gemv& g) { gemv(f, g); }
  void exec(const lane::Form& f, const lane::GemvParts& g) {
    for (lane::Gemv part : g.parts) {
      part.x = g.x;
      part.xq = g.xq;
      gemv(f, part);
    }
  }
  void exec(const lane::Form& f, const lane::GemvNorm& g) {
    gemv(f, g.gemv);
    if (!g.spans) {
      exec(f, g.norm);
      return;
    }
    // norm_fold (the decode step's one row): the residual added, each 32-group's sum of squares, the copy of x * w
    // unscaled; the norm's output is not written.
    T* x = act(f, g.norm.x);
    const T* add = act(f, *g.norm.add);
    T* spans = act(f, lane::Ref{*g.spans, 0});
    const std::vector<float>& w = vectors_.at(g.norm.w);
    const size_t d = m_.d_model;
    std::vector<T> xw(d);
    for (size_t i = 0; i < d; ++i) {
      x[i] = T(double(x[i]) + double(add[i]));
      xw[i] = T(double(x[i]) * double(w[i]));
    }
    for (size_t s = 0; s < d / 32; ++s) {  // (a 32-group's sum of squares, either form of the fold)
      double ss = 0;
      for (size_t i = 32 * s; i < 32 * (s + 1); ++i) ss += double(x[i]) * double(x[i]);
      spans[s] = T(ss);
    }
    quantize(f, lane::QuantizeI8{g.norm.out, *g.norm.xq, 1, d, false}, xw.data());
  }
  void exec(const lane::Form& f, const lane::GemvRope& g) {
    exec(f, g.qkv);
    exec(f, g.rope);
  }
  // The int8 rule of int8_view, written out as lk_quantize_i8 writes it; or (gemm_half) the values rounded to f16.
  void exec(const lane::Form& f, const lane::QuantizeI8& o) { quantize(f, o, act(f, o.x)); }
  // (x: the values to quantize, o.x's unless a launch quantizes values of its own)
  void quantize(const lane::Form& f, const lane::QuantizeI8& o, const T* x) {
    if (o.half) {
      uint16_t* h = reinterpret_cast<uint16_t*>(act(f, lane::Ref{o.xq, 0}));
      for (size_t i = 0; i < size_t(o.rows) * o.k; ++i) h[i] = ggml::f32_to_f16(float(x[i]));
      return;
    }
    signed char* q = quantized_values(f, o.xq);
    by_row_[o.xq] = !o.fragments;
    for (int r = 0; r < o.rows; ++r)
      for (size_t b = 0; b < o.k; b += 32) {
        float v[32];
        for (size_t i = 0; i < 32; ++i) v[i] = float(x[r * o.k + b + i]);
        for (int word = 0; word < words_; ++word) {
          float amax = 0.f;
          for (float e : v) amax = std::max(amax, std::fabs(e));
          const float scale = amax / 127.f, inv = amax > 0.f ? 127.f / amax : 0.f;
          quantized_scale(f, o.xq, word, o.rows, r, o.k, b) = scale;
          for (size_t i = 0; i < 32; ++i) {
            const float qi = std::nearbyint(v[i] * inv);
            q[quantized_value_at(!o.fragments, word, o.rows, r, o.k, b + i)] = static_cast<signed char>(qi);
            v[i] -= scale * qi;
          }
        }
      }
  }
  // The dense FFN's gate activation of g: SiLU, or the tanh GELU.
  static double gated(model::Activation act, double g) {
    if (act == model::Activation::Gelu)
      return 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (g + 0.044715 * g * g * g)));
    return g / (1.0 + std::exp(-g));
  }
  void exec(const lane::Form& f, const lane::GemvGlu& g) {
    const lane::Matrix& w = p_.matrix(g.wg);
    // (half_only: the output has no place of its own, the copy alone is stored; its values here while they are made)
    if (g.half_only) scratch_[g.out.buf].assign(size_t(g.rows) * w.rows, T(0));
    std::vector<T> gate(size_t(g.rows) * w.rows), up(gate.size());
    lane::Gemv a{g.wg, g.x, std::nullopt, g.out, g.rows, g.xq}, b{g.wu, g.x, std::nullopt, g.out, g.rows, g.xq};
    gemv(f, a);
    std::copy_n(act(f, g.out), gate.size(), gate.begin());
    gemv(f, b);
    std::copy_n(act(f, g.out), up.size(), up.begin());
    T* out = act(f, g.out);
    for (size_t i = 0; i < gate.size(); ++i) out[i] = T(gated(m_.ffn_act, gate[i]) * double(up[i]));
    // (glu_groups: its int8 copy too; out_half: a chunk's f16 copy, as lk_half_rows would write it)
    if (g.out_xq) exec(f, lane::QuantizeI8{g.out, *g.out_xq, g.rows, w.rows, false, g.out_half});
    if (g.half_only) scratch_.erase(g.out.buf);
  }
  void exec(const lane::Form& f, const lane::Rope& o) {
    const size_t hd = m_.head_dim, half = hd / 2;
    const int pos = ints("pos")[0];
    for (int r = 0; r < o.rows; ++r)
      for (uint32_t h = 0; h < m_.heads + m_.kv_heads; ++h) {
        const bool is_q = h < m_.heads;
        T* x = is_q ? act(f, o.q) + (r * m_.heads + h) * hd : act(f, o.k) + (r * m_.kv_heads + h - m_.heads) * hd;
        if (o.qn) {
          const std::vector<float>& w = vectors_.at(is_q ? *o.qn : *o.kn);
          double ss = 0;
          for (size_t i = 0; i < hd; ++i) ss += double(x[i]) * double(x[i]);
          const double s = 1.0 / std::sqrt(ss / double(hd) + double(m_.norm_eps));
          for (size_t i = 0; i < hd; ++i) x[i] = T(double(x[i]) * s * double(w[i]));
        }
        for (size_t j = 0; j < half; ++j) {
          const bool neox = m_.rope_mode == model::RopeMode::Neox;
          const size_t a = neox ? j : 2 * j, b = neox ? j + half : 2 * j + 1;
          const size_t t = size_t(pos + r) * half + j;
          const double c = side(2 * o.table)[t], s = side(2 * o.table + 1)[t], xa = x[a], xb = x[b];
          x[a] = T(xa * c - xb * s);
          x[b] = T(xa * s + xb * c);
        }
      }
    if (o.append) exec(f, *o.append);
  }
  // The caches hold each value as the kv_cache knob's type reads it back (kernels/kv.cuh): rounded to f16 or bf16, or
  // a q8_0 32-block's f16 scale times its int8 value; the sim keeps them as T.
  // A value rounded to a 16-bit cache's type (f16 or bf16), as the tensor-core attention rounds its operands.
  double round16(double x) const {
    return p_.knobs.kv_cache == knobs::KvCache::F16 ? ggml::f16_to_f32(ggml::f32_to_f16(float(x)))
                                                    : ggml::bf16_to_f32(ggml::f32_to_bf16(float(x)));
  }
  void put_row(T* dst, const T* src, size_t width) const {
    switch (p_.knobs.kv_cache) {
      case knobs::KvCache::Act:
        std::copy_n(src, width, dst);
        break;
      case knobs::KvCache::F16:
      case knobs::KvCache::Bf16:
        for (size_t i = 0; i < width; ++i) dst[i] = T(round16(double(src[i])));
        break;
      case knobs::KvCache::Q8_0:
        for (size_t b = 0; b < width; b += 32) {
          float amax = 0.f;
          for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(float(src[b + i])));
          const float d = amax / 127.f, inv = amax > 0.f ? 127.f / amax : 0.f;
          const float dh = ggml::f16_to_f32(ggml::f32_to_f16(d));
          for (size_t i = 0; i < 32; ++i) dst[b + i] = T(dh * std::nearbyint(float(src[b + i]) * inv));
        }
        break;
    }
  }
  void exec(const lane::Form& f, const lane::KvAppend& o) {
    const int pos = ints("pos")[0];
    T* kc = act(f, o.kc);
    T* vc = act(f, o.vc);
    const size_t hd = m_.head_dim, vd = m_.value_dim;
    for (int r = 0; r < o.rows; ++r)
      for (uint32_t h = 0; h < m_.kv_heads; ++h) {
        put_row(kc + (h * size_t(p_.ctx) + pos + r) * hd, act(f, o.k) + (r * m_.kv_heads + h) * hd, hd);
        put_row(vc + (h * size_t(p_.ctx) + pos + r) * vd, act(f, o.v) + (r * m_.kv_heads + h) * vd, vd);
      }
  }
  // lk_attention_out: a head's output value from its softmax's max m, sum l and weighted value v, with the head's sink
  // logit in the sum where the launch has sinks.
  double attention_out(double m, double l, double v, const std::optional<std::string>& sinks, uint32_t head) const {
    if (!sinks) return v / l;
    const double s = vectors_.at(*sinks)[head], top = std::max(m, s), f = std::exp(m - top);
    return v * f / (l * f + std::exp(s - top));
  }
  // Each split's partial (max, sum, weighted values) laid out as lk_attention writes it, or the output directly; the
  // splits spread over the row's window (lk_window_first).
  void exec(const lane::Form& f, const lane::Attention& a) {
    if (a.rope) exec(f, *a.rope);  // (the decode step's rope in its attention: the same numbers as rope's launch)
    int parts = a.splits;  // (the splits that hold positions)
    if (lane::mma_attention(p_.knobs, a.rows))
      parts = exec_mma(f, a);
    else
      exec_plain(f, a);
    if (a.fold && parts > 1) fold(f, *a.part, a.out, a.rows, a.splits, parts, a.sinks);  // (its own, as Fold's)
    if (a.xq) exec(f, lane::QuantizeI8{a.out, *a.xq, a.rows, size_t(m_.heads) * m_.value_dim, false});  // (as Fold's)
  }
  void exec_plain(const lane::Form& f, const lane::Attention& a) {
    const int pos = ints("pos")[0];
    const size_t hd = m_.head_dim, vd = m_.value_dim;
    const T* kc = act(f, a.kc);
    const T* vc = act(f, a.vc);
    for (int r = 0; r < a.rows; ++r)
      for (uint32_t h = 0; h < m_.heads; ++h) {
        const uint32_t kvh = h / m_.group();
        const T* q = act(f, a.q) + (r * m_.heads + h) * hd;
        const int len = pos + r + 1, first = lk_window_first(len, a.window);
        const int chunk = (len - first + a.splits - 1) / a.splits;
        for (int s = 0; s < a.splits; ++s) {
          double mx = -std::numeric_limits<double>::infinity(), sum = 0;
          std::vector<double> val(vd, 0.0);
          for (int t = first + s * chunk; t < std::min(len, first + (s + 1) * chunk); ++t) {
            double sc = 0;
            for (size_t i = 0; i < hd; ++i)
              sc += double(q[i]) / std::sqrt(double(m_.attention_width())) * kc[(kvh * size_t(p_.ctx) + t) * hd + i];
            sc = softcap(sc, m_.attn_softcap);
            const double mn = std::max(mx, sc), corr = std::exp(mx - mn), e = std::exp(sc - mn);
            sum = sum * corr + e;
            for (size_t i = 0; i < vd; ++i) val[i] = val[i] * corr + e * vc[(kvh * size_t(p_.ctx) + t) * vd + i];
            mx = mn;
          }
          if (!a.part) {
            T* out = act(f, a.out) + (r * m_.heads + h) * vd;
            for (size_t i = 0; i < vd; ++i) out[i] = T(attention_out(mx, sum, val[i], a.sinks, h));
          } else {
            T* pp = act(f, *a.part) + ((r * m_.heads + h) * a.splits + s) * (vd + 2);
            pp[0] = T(mx);
            pp[1] = T(sum);
            for (size_t i = 0; i < vd; ++i) pp[2 + i] = T(val[i]);
          }
        }
      }
  }
  // lk_attention_mma's arithmetic: the split over the positions from the chunk's first row's first (its window's) to
  // its longest row's last, started at the row's block's first row's first; the queries rounded to the cache's type,
  // tiles of LK_AM_KEYS positions from the split's start, each warp's positions of a tile (all, or under STEP its
  // share: lk_attention_mma_ways) weighed against its running max and rounded (a warp's positions that are all before
  // the row's window leave it as it was); under STEP the warps' partials merged at the end. Returns the splits that
  // hold positions: all, but under the step's own fold (lk_am_fold_chunk's whole tiles) those of a short row's
  // positions; one alone writes the output.
  int exec_mma(const lane::Form& f, const lane::Attention& a) {
    const int pos = ints("pos")[0];
    const size_t hd = m_.head_dim, vd = m_.value_dim, group = m_.group();
    const T* kc = act(f, a.kc);
    const T* vc = act(f, a.vc);
    const bool step = lane::mma_attention_step(m_, a.rows);
    const int ways = step ? lk_attention_mma_ways(true, int(hd), int(vd)) : 1, nk = LK_AM_KEYS / ways,
              block_rows = lk_attention_mma_rows(step);
    const int longest = pos + a.rows, first = lk_window_first(pos + 1, a.window), span = longest - first;
    const bool own = a.fold && a.splits > 1;
    const int chunk = own ? lk_am_fold_chunk(span, a.splits) : (span + a.splits - 1) / a.splits;
    const int parts = own ? (span + chunk - 1) / chunk : a.splits;
    constexpr double none = -std::numeric_limits<double>::infinity();
    std::vector<double> q(hd), w(nk), mx(ways), sum(ways);
    std::vector<std::vector<double>> val(ways, std::vector<double>(vd));
    for (int r = 0; r < a.rows; ++r)
      for (uint32_t h = 0; h < m_.heads; ++h) {
        const uint32_t kvh = h / m_.group();
        const size_t i0 = (r * group + h % group) / block_rows * block_rows;  // the row's block's first query row
        const int block_first = lk_window_first(pos + int(i0 / group) + 1, a.window);
        const int row_first = lk_window_first(pos + r + 1, a.window);
        for (size_t i = 0; i < hd; ++i) q[i] = round16(double(act(f, a.q)[(r * m_.heads + h) * hd + i]));
        for (int s = 0; s < parts; ++s) {
          const int split0 = first + s * chunk, t0 = std::max(split0, block_first);
          const int end = std::min(std::min(longest, split0 + chunk), pos + r + 1);
          std::fill(mx.begin(), mx.end(), none);
          std::fill(sum.begin(), sum.end(), 0.0);
          for (auto& v : val) std::fill(v.begin(), v.end(), 0.0);
          for (int tb = t0; tb < end; tb += nk) {
            const int way = (tb - t0) / nk % ways, lo = std::max(tb, row_first), n = std::min(tb + nk, end) - lo;
            if (n <= 0) continue;
            double tmax = mx[way];
            for (int j = 0; j < n; ++j) {
              double sc = 0;
              for (size_t i = 0; i < hd; ++i) sc += q[i] * kc[(kvh * size_t(p_.ctx) + lo + j) * hd + i];
              w[j] = softcap(sc / std::sqrt(double(m_.attention_width())), m_.attn_softcap);
              tmax = std::max(tmax, w[j]);
            }
            const double corr = std::exp(mx[way] - tmax);
            sum[way] *= corr;
            for (double& v : val[way]) v *= corr;
            for (int j = 0; j < n; ++j) {
              const double e = round16(std::exp(w[j] - tmax));
              sum[way] += e;
              for (size_t i = 0; i < vd; ++i) val[way][i] += e * vc[(kvh * size_t(p_.ctx) + lo + j) * vd + i];
            }
            mx[way] = tmax;
          }
          const double top = *std::max_element(mx.begin(), mx.end());
          double l = 0;
          std::vector<double> v(vd, 0.0);
          for (int way = 0; way < ways; ++way) {
            if (mx[way] == none) continue;
            const double fw = std::exp(mx[way] - top);
            l += sum[way] * fw;
            for (size_t i = 0; i < vd; ++i) v[i] += val[way][i] * fw;
          }
          if (!a.part || parts == 1) {
            T* out = act(f, a.out) + (r * m_.heads + h) * vd;
            for (size_t i = 0; i < vd; ++i) out[i] = T(attention_out(top, l, v[i], a.sinks, h));
          } else {
            T* pp = act(f, *a.part) + ((r * m_.heads + h) * a.splits + s) * (vd + 2);
            pp[0] = T(top);
            pp[1] = T(l);
            for (size_t i = 0; i < vd; ++i) pp[2 + i] = T(v[i]);
          }
        }
      }
    return parts;
  }
  void exec(const lane::Form& f, const lane::Fold& o) {
    fold(f, o.part, o.out, o.rows, o.splits, o.splits, o.sinks);
    if (o.xq) exec(f, lane::QuantizeI8{o.out, *o.xq, o.rows, size_t(m_.heads) * m_.value_dim, false});  // (as AddNorm's)
  }
  // lk_attention_fold's merge of the first `splits` partials of each (row, head), `stride` a head.
  void fold(const lane::Form& f, const lane::Ref& part, const lane::Ref& to, int rows, int stride, int splits,
            const std::optional<std::string>& sinks) {
    const size_t vd = m_.value_dim;
    for (int r = 0; r < rows; ++r)
      for (uint32_t h = 0; h < m_.heads; ++h) {
        const T* pp = act(f, part) + (r * m_.heads + h) * stride * (vd + 2);
        double mx = -std::numeric_limits<double>::infinity();
        for (int s = 0; s < splits; ++s) mx = std::max(mx, double(pp[s * (vd + 2)]));
        T* out = act(f, to) + (r * m_.heads + h) * vd;
        for (size_t i = 0; i < vd; ++i) {
          double sum = 0, val = 0;
          for (int s = 0; s < splits; ++s) {
            const double ms = pp[s * (vd + 2)];
            if (ms == -std::numeric_limits<double>::infinity()) continue;
            sum += pp[s * (vd + 2) + 1] * std::exp(ms - mx);
            val += pp[s * (vd + 2) + 2 + i] * std::exp(ms - mx);
          }
          out[i] = T(attention_out(mx, sum, val, sinks, h));
        }
      }
  }
  void exec(const lane::Form& f, const lane::SwiGlu& o) {
    const T* g = act(f, o.g);
    const T* u = act(f, o.u);
    T* out = act(f, o.out);
    for (size_t i = 0; i < o.n; ++i) out[i] = T(gated(o.act, g[i]) * double(u[i]));
  }
  // (lk_softcap: the model's softcaps, none where the cap is 0)
  static double softcap(double x, float cap) { return cap == 0.f ? x : double(cap) * std::tanh(x / double(cap)); }
  void exec(const lane::Form& f, const lane::ArgMax& o) {
    T* x = act(f, o.logits);
    if (m_.final_softcap != 0.f)
      for (uint32_t i = 0; i < m_.vocab; ++i) x[i] = T(softcap(double(x[i]), m_.final_softcap));
    int best = 0;
    for (uint32_t i = 1; i < m_.vocab; ++i)
      if (x[i] > x[best]) best = int(i);
    ints("tok")[0] = best;
    ints("gen")[ints("count")[0]++] = best;
    ints("pos")[0] += o.rows;
  }

  // The mixture's launches (kernels/moe.cuh). Rows first ... first + n - 1 of `w` (an expert's of a 3-D tensor) times
  // the activation row x as lk_moe_glu and lk_moe_down compute them: one row's GEMV, rounded to T, x as the int8
  // numerics see it where `w` is quantized.
  // With `bias` (an [experts][n] vector, the expert's row of it at `first`) added to each sum. With `xh` (gemm_half's
  // grouped experts, lk_moe_gemm_h) x is that f16 copy's row and the weights are rounded to f16.
  // x is read as a projection reads it: its f16 copy xh where given, else the int8 copy's row `xq_row` of `xq` where
  // given (gemv_prequant's: the same values int8_view sees), else as int8_view sees it under the int8 numerics.
  struct ExpertInput {
    const uint16_t* xh = nullptr;
    const std::optional<std::string>* xq = nullptr;
    int xq_rows = 0, xq_row = 0;
  };
  std::vector<T> expert_rows(const lane::Form& f, const lane::Matrix& w, size_t first, size_t n, const T* x,
                             const std::optional<std::string>& bias, const ExpertInput& in) {
    const std::vector<float>& W = in.xh ? weights_half(w) : weights_.at(w.name);
    std::vector<double> xr(x, x + w.cols);
    if (in.xh)
      for (size_t i = 0; i < w.cols; ++i) xr[i] = double(ggml::f16_to_f32(in.xh[i]));
    else if (in.xq && *in.xq)
      xr = quantized(f, **in.xq, in.xq_rows, in.xq_row, w.cols);
    else if (words_ && (w.type == ggml::Type::Q8_0 || lk_is_block(int(w.type))))
      xr = int8_view(x, w.cols);
    std::vector<T> y(n);
    for (size_t j = 0; j < n; ++j) {
      double s = bias ? vectors_.at(*bias)[first + j] : 0.0;
      for (size_t i = 0; i < w.cols; ++i) s += double(W[(first + j) * w.cols + i]) * xr[i];
      y[j] = T(s);
    }
    return y;
  }
  // The reference's route (compiler/src/reference: top_k, softmax, the renormalization's clamp) over the T logits.
  void exec(const lane::Form& f, const lane::MoeRoute& o) {
    const size_t E = m_.experts, k = m_.experts_used, d = m_.d_model;
    for (int r = 0; r < o.rows; ++r) {
      const T* l = act(f, o.logits) + r * E;
      std::vector<double> score(l, l + E);
      const bool softmax_first = m_.gating == model::Gating::Softmax;
      auto softmax = [](std::vector<double>& v) {
        double top = -std::numeric_limits<double>::infinity(), sum = 0;
        for (double e : v) top = std::max(top, e);
        for (double& e : v) sum += e = std::exp(e - top);
        for (double& e : v) e /= sum;
      };
      if (softmax_first) softmax(score);
      std::vector<int> pick;
      std::vector<double> w;
      for (size_t s = 0; s < k; ++s) {
        int best = -1;
        for (size_t e = 0; e < E; ++e)
          if (std::find(pick.begin(), pick.end(), int(e)) == pick.end() && (best < 0 || score[e] > score[best]))
            best = int(e);
        pick.push_back(best);
        w.push_back(score[best]);
      }
      if (!softmax_first) softmax(w);
      if (m_.norm_expert_weights) {
        double sum = 0;
        for (double v : w) sum += v;
        for (double& v : w) v /= std::max(sum, 6.103515625e-5);
      }
      int* ids = ints(f, o.ids) + r * k;
      for (size_t s = 0; s < k; ++s) {
        ids[s] = pick[s];
        act(f, o.weights)[r * k + s] = T(w[s]);
      }
      if (o.shared_w) {
        const std::vector<float>& g = vectors_.at(*o.shared_w);
        const T* x = act(f, o.x) + r * d;
        double dot = 0;
        for (size_t i = 0; i < d; ++i) dot += double(g[i]) * double(x[i]);
        act(f, *o.gate)[r] = T(1.0 / (1.0 + std::exp(-dot)));
      }
    }
  }
  // Grouped by expert as lk_moe_group groups them: each expert's pairs ascending, the experts in order.
  void exec(const lane::Form& f, const lane::MoeGroup& o) {
    const int pairs = o.rows * int(m_.experts_used);
    const int* ids = ints(f, o.ids);
    const lane::ExpertGroups& g = o.groups;
    for (int e = 0, pos = 0; e < int(m_.experts); ++e) {
      ints(f, g.first)[e] = pos;
      for (int i = 0; i < pairs; ++i)
        if (ids[i] == e) {
          ints(f, g.order)[pos] = i;
          ints(f, g.at)[i] = pos;
          std::copy_n(act(f, o.x) + (i / m_.experts_used) * m_.d_model, m_.d_model, act(f, o.xg) + pos * m_.d_model);
          ++pos;
        }
      ints(f, g.count)[e] = pos - ints(f, g.first)[e];
    }
  }
  // The (position, expert) of each pair an expert launch computes: the decode step's pairs in (row, slot) order, a
  // chunk's in grouped order (read from MoeGroup's buffers).
  std::vector<std::pair<size_t, size_t>> expert_pairs(const lane::Form& f, int rows, const lane::Ref& ids,
                                                      const std::optional<lane::ExpertGroups>& groups) {
    std::vector<std::pair<size_t, size_t>> out;
    if (!groups) {
      for (size_t i = 0; i < size_t(rows) * m_.experts_used; ++i) out.push_back({i, size_t(ints(f, ids)[i])});
      return out;
    }
    for (size_t e = 0; e < m_.experts; ++e)
      for (int j = 0; j < ints(f, groups->count)[e]; ++j) out.push_back({size_t(ints(f, groups->first)[e] + j), e});
    return out;
  }
  // Row `pos` of a gemm_half f16 copy (null without one).
  const uint16_t* half_row(const lane::Form& f, const std::optional<std::string>& xq, size_t pos, size_t k) {
    return xq ? reinterpret_cast<const uint16_t*>(act(f, lane::Ref{*xq, 0})) + pos * k : nullptr;
  }
  void exec(const lane::Form& f, const lane::MoeGlu& o) {
    const lane::Matrix& g = p_.matrix(o.wg);
    const lane::Matrix& u = p_.matrix(o.wu);
    const size_t n = g.rows / g.experts;
    for (auto [pos, e] : expert_pairs(f, o.rows, o.ids, o.groups)) {
      // (the decode step's pair reads its row; a chunk's, its gathered row)
      const size_t row = o.groups ? pos : pos / m_.experts_used;
      const T* x = act(f, o.x) + row * g.cols;
      const ExpertInput in =
          o.groups ? ExpertInput{half_row(f, o.xq, pos, g.cols)} : ExpertInput{nullptr, &o.xq, o.rows, int(row)};
      const std::vector<T> a = expert_rows(f, g, e * n, n, x, o.bg, in), b = expert_rows(f, u, e * n, n, x, o.bu, in);
      T* out = act(f, o.out) + pos * n;
      const double limit = m_.swiglu_limit, alpha = m_.swiglu_alpha;
      for (size_t j = 0; j < n; ++j) {
        if (limit == 0) {
          out[j] = T(double(a[j]) / (1.0 + std::exp(-double(a[j]))) * double(b[j]));
          continue;
        }
        const double ga = std::min(double(a[j]), limit), ub = std::clamp(double(b[j]), -limit, limit);
        out[j] = T(ga / (1.0 + std::exp(-alpha * ga)) * (ub + 1.0));
      }
    }
  }
  void exec(const lane::Form& f, const lane::MoeDown& o) {
    const lane::Matrix& w = p_.matrix(o.w);
    const size_t n = w.rows / w.experts;
    for (auto [pos, e] : expert_pairs(f, o.rows, o.ids, o.groups)) {
      const ExpertInput in = o.groups ? ExpertInput{half_row(f, o.xq, pos, w.cols)}
                                      : ExpertInput{nullptr, &o.xq, o.rows * int(m_.experts_used), int(pos)};
      const std::vector<T> y = expert_rows(f, w, e * n, n, act(f, o.x) + pos * w.cols, o.bias, in);
      std::copy(y.begin(), y.end(), act(f, o.out) + pos * n);
    }
  }
  void exec(const lane::Form& f, const lane::MoeCombine& o) {
    const size_t k = m_.experts_used, d = m_.d_model;
    for (int r = 0; r < o.rows; ++r)
      for (size_t i = 0; i < d; ++i) {
        double v = 0;
        for (size_t s = 0; s < k; ++s)
          v += double(act(f, o.weights)[r * k + s]) *
               double(act(f, o.expert_out)[size_t(o.at ? ints(f, *o.at)[r * k + s] : int(r * k + s)) * d + i]);
        if (o.shared) v += double(act(f, *o.gate)[r]) * double(act(f, *o.shared)[r * d + i]);
        act(f, o.y)[r * d + i] = T(v);
      }
    if (o.norm) exec(f, *o.norm);
  }

  const gguf::File& file_;
  const lane::Schedule& p_;
  const model::Model& m_;
  const int words_;  // the int8 numerics' words an activation: 0, 1 or 2
  std::vector<uint8_t> arena_;
  std::map<std::string, std::vector<uint8_t>> carried_;
  std::map<std::string, std::vector<T>> scratch_;  // (a half_only GLU's output while it runs)
  std::map<std::string, std::vector<float>> weights_, vectors_, weights_half_;
  std::map<std::string, bool> by_row_;  // each int8 copy's layout (QuantizeI8::fragments): row by row, or in fragments
};

}  // namespace lt::test
