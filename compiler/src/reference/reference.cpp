// The CPU reference forward pass: f64 activations and sums over weights dequantized a row at a time, rows spread
// over every core.
//
// Activations between layers, the key/value caches and every sum are f64: the reference is what lanes are judged
// against, so it rounds only where the checkpoint does (its weights) and where the logits are written (f32).
//
// Beyond the dense decoder, llama.cpp's graphs for qwen2moe, qwen3moe, gpt-oss and the gemmas: attention sinks and
// sliding windows (llm_graph_context::build_attn, LLAMA_SWA_TYPE_STANDARD), softcapped attention and output logits,
// sandwich norms, the output bias, YaRN rope (ggml's rope_yarn), and the mixture (build_moe_ffn): router, top-k,
// softmax and normalization per the model's gating, each selected expert's FFN read from its rows of the 3-D expert
// tensors, the weighted sum in the selection's order, the shared expert.
#include "compiler/reference.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "compiler/error.hpp"

namespace lt::reference {
namespace {

// A fixed set of worker threads that runs one parallel loop at a time, the calling thread taking part as worker 0.
class Pool {
 public:
  using Task = std::function<void(size_t task, unsigned worker)>;

  explicit Pool(unsigned threads) {
    for (unsigned id = 1; id < std::max(1u, threads); ++id) workers_.emplace_back([this, id] { work(id); });
  }

  ~Pool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    start_.notify_all();
    for (auto& w : workers_) w.join();
  }

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Runs fn(task, worker) for every task in [0, tasks); returns when all are done, rethrowing the first failure.
  void run(size_t tasks, const Task& fn) {
    if (tasks == 0) return;
    if (workers_.empty() || tasks == 1) {
      for (size_t t = 0; t < tasks; ++t) fn(t, 0);
      return;
    }
    {
      std::lock_guard lock(mu_);
      fn_ = &fn;
      tasks_ = tasks;
      next_ = 0;
      busy_ = static_cast<unsigned>(workers_.size());
      error_ = nullptr;
      ++generation_;
    }
    start_.notify_all();
    drain(0);
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return busy_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work(unsigned id) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mu_);
        start_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      drain(id);
      std::lock_guard lock(mu_);
      if (--busy_ == 0) done_.notify_all();
    }
  }

  void drain(unsigned id) {
    for (size_t t; (t = next_.fetch_add(1)) < tasks_;) {
      try {
        (*fn_)(t, id);
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
        next_ = tasks_;
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  const Task* fn_ = nullptr;
  size_t tasks_ = 0;
  std::atomic<size_t> next_{0};
  unsigned busy_ = 0;
  std::exception_ptr error_;
};

// A 1-D tensor (norm weights, biases) read into f64.
std::vector<double> read_vector(const gguf::File& file, const gguf::TensorInfo* t) {
  if (!t) return {};
  std::vector<float> f(t->elements());
  ggml::dequantize(t->type, file.data(*t).data(), f);
  return {f.begin(), f.end()};
}

// One layer's 1-D tensors (and the experts' biases, [expert][row]) in f64; empty where the layer has none.
struct LayerVectors {
  std::vector<double> attn_norm, bq, bk, bv, bo, q_norm, k_norm, sinks, ffn_norm;
  std::vector<double> router_bias, gate_exps_bias, up_exps_bias, down_exps_bias, shared_gate_inp;
  std::vector<double> attn_post_norm, ffn_post_norm;  // gemma3's sandwich norms (empty: none)
};

// The experts one token runs and their weights, largest first.
struct Route {
  std::vector<uint32_t> experts;
  std::vector<double> weights;
};

// The indices of the k largest of `score`, largest first, the lowest index first among equals.
std::vector<uint32_t> top_k(const double* score, size_t n, size_t k) {
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](uint32_t a, uint32_t b) { return score[a] > score[b] || (score[a] == score[b] && a < b); });
  order.resize(k);
  return order;
}

// x capped to (-cap, cap) smoothly: cap tanh(x / cap) (gemma2's attention and final logits; cap 0: x).
double softcap(double x, float cap) {
  return cap == 0.f ? x : double(cap) * std::tanh(x / double(cap));
}

// exp(x - max) / sum over `x`, in place.
void softmax(std::vector<double>& x) {
  double top = -INFINITY, sum = 0;
  for (double v : x) top = std::max(top, v);
  for (double& v : x) sum += v = std::exp(v - top);
  for (double& v : x) v /= sum;
}

// Where `logits` (one token's, over every expert) send the token under `m`'s gating: llama.cpp's build_moe_ffn.
Route route(const model::Model& m, const double* logits) {
  Route r;
  std::vector<double> probs(logits, logits + m.experts);
  if (m.gating == model::Gating::Softmax) softmax(probs);  // SoftmaxTopK: select on the logits themselves
  r.experts = top_k(probs.data(), m.experts, m.experts_used);
  for (uint32_t e : r.experts) r.weights.push_back(probs[e]);
  if (m.gating == model::Gating::SoftmaxTopK) softmax(r.weights);
  if (m.norm_expert_weights) {
    double sum = 0;
    for (double w : r.weights) sum += w;
    sum = std::max(sum, 6.103515625e-5);  // llama.cpp's clamp: the smallest normal f16
    for (double& w : r.weights) w /= sum;
  }
  return r;
}

// A dense FFN's gated product in place of gate: act(gate) * up, by the model's activation (model::Activation).
void dense_glu(const model::Model& m, std::vector<double>& gate, const std::vector<double>& up) {
  if (m.ffn_act == model::Activation::Gelu) {
    const double c = std::sqrt(2.0 / 3.14159265358979323846);
    for (size_t i = 0; i < gate.size(); ++i) {
      const double g = gate[i];
      gate[i] = 0.5 * g * (1.0 + std::tanh(c * (g + 0.044715 * g * g * g))) * up[i];
    }
    return;
  }
  for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
}

// An expert's activation of its gate and up sums, in place into `gate`: SwiGLU, or gpt-oss's clamped SwiGLU
// (ggml_swiglu_oai) when the model sets a limit.
void expert_glu(const model::Model& m, std::vector<double>& gate, const std::vector<double>& up) {
  if (m.swiglu_limit == 0.f) return dense_glu(m, gate, up);
  const double limit = m.swiglu_limit, alpha = m.swiglu_alpha;
  for (size_t i = 0; i < gate.size(); ++i) {
    const double g = std::min(gate[i], limit), u = std::clamp(up[i], -limit, limit);
    gate[i] = g / (1.0 + std::exp(-alpha * g)) * (u + 1.0);
  }
}

// x * w / sqrt(mean(x^2) + eps) over each `n`-wide row of `x`, in place.
void rms_norm(double* x, size_t rows, size_t n, const std::vector<double>& w, double eps) {
  for (size_t r = 0; r < rows; ++r) {
    double* v = x + r * n;
    double ss = 0;
    for (size_t i = 0; i < n; ++i) ss += v[i] * v[i];
    double inv = 1.0 / std::sqrt(ss / double(n) + eps);
    for (size_t i = 0; i < n; ++i) v[i] = v[i] * inv * w[i];
  }
}

// The dot product of a row (weights, or a cached key) with an activation row in f64: eight interleaved partial sums in
// a fixed order, so a result depends neither on the chunk size nor on the thread count.
template <class Row>
[[gnu::always_inline]] inline double dot(const Row* w, const double* x, size_t n) {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (size_t k = 0; k < 8; ++k) s[k] += double(w[i + k]) * x[i + k];
  for (; i < n; ++i) s[i % 8] += double(w[i]) * x[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// dot() of a dequantized weight row, the reference's hottest loop, built for the x86-64 baseline and for AVX2 and
// AVX-512 (chosen at load by the CPU): the same eight partial sums in the same order, only wider registers (the file
// is built without contracting a multiply and an add into one rounding), so every build gives the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
double
dot_row(const float* w, const double* x, size_t n) {
  return dot(w, x, n);
}

void add_bias(std::vector<double>& y, const std::vector<double>& b) {
  if (b.empty()) return;
  for (size_t i = 0; i < y.size(); ++i) y[i] += b[i % b.size()];
}

}  // namespace

struct Reference::Impl {
  const gguf::File& file;
  model::Model m;
  Pool pool;
  std::vector<std::vector<float>> row_buffer;     // per worker: one dequantized weight row
  std::vector<std::vector<double>> score_buffer;  // per worker: one head's attention scores
  std::vector<double> inv_freq, inv_freq_sliding;  // (the sliding layers' where they rope by their own)
  double rope_factor = 1.0;  // YaRN's attention factor on rope's cosine and sine
  std::vector<double> output_norm;
  std::vector<LayerVectors> vectors;
  // One sequence's state: its caches (per layer: position x (kv_heads * width)) and its next position.
  struct Sequence {
    std::vector<std::vector<double>> k, v;
    int pos = 0;
  };
  std::vector<Sequence> seqs;  // the single-sequence calls' is the first
  // A run's rows: each its sequence's and its position.
  struct Rows {
    std::vector<size_t> seq;
    std::vector<int> pos;
  };

  Impl(const gguf::File& f, const model::Model& model, unsigned threads)
      : file(f), m(model), pool(threads ? threads : std::max(1u, std::thread::hardware_concurrency())) {
    size_t widest = std::max(
        {size_t{m.d_model}, size_t{m.ffn}, size_t{m.heads} * m.value_dim, size_t{m.expert_ffn}, size_t{m.shared_ffn}});
    row_buffer.assign(pool.size(), std::vector<float>(widest));
    score_buffer.resize(pool.size());
    inv_freq = m.rope_inv_freq();
    inv_freq_sliding = m.rope_inv_freq(true);
    rope_factor = m.rope_attention_factor();
    output_norm = read_vector(file, m.output_norm);
    for (const model::Layer& l : m.layer)
      vectors.push_back({read_vector(file, l.attn_norm), read_vector(file, l.bq), read_vector(file, l.bk),
                         read_vector(file, l.bv), read_vector(file, l.bo), read_vector(file, l.q_norm),
                         read_vector(file, l.k_norm), read_vector(file, l.sinks), read_vector(file, l.ffn_norm),
                         read_vector(file, l.router_bias), read_vector(file, l.gate_exps_bias),
                         read_vector(file, l.up_exps_bias), read_vector(file, l.down_exps_bias),
                         read_vector(file, l.shared_gate_inp), read_vector(file, l.attn_post_norm),
                         read_vector(file, l.ffn_post_norm)});
    sequences(1);
  }

  // y (rows x out) = x (rows x in) times w's rows: each output row of w dequantized once, by one worker.
  std::vector<double> matmul(const gguf::TensorInfo& w, const std::vector<double>& x, size_t rows) {
    return matmul_rows(w, 0, w.rows(), x.data(), rows);
  }

  // y (rows x out) = x (rows x in) times w's rows first ... first + out - 1 (an expert's of a 3-D tensor): each of
  // them dequantized once, by one worker; the rest of w is not read.
  std::vector<double> matmul_rows(const gguf::TensorInfo& w, uint64_t first, size_t out, const double* x, size_t rows) {
    const size_t in = w.dims[0];
    const uint64_t row_bytes = ggml::row_bytes(w.type, in);
    const uint8_t* base = file.data(w).data() + first * row_bytes;
    std::vector<double> y(rows * out);
    const size_t per_task = std::max<size_t>(1, out / (size_t{pool.size()} * 16));
    pool.run((out + per_task - 1) / per_task, [&](size_t task, unsigned worker) {
      std::span<float> row(row_buffer[worker].data(), in);
      for (size_t r = task * per_task; r < std::min(out, (task + 1) * per_task); ++r) {
        ggml::dequantize(w.type, base + r * row_bytes, row);
        for (size_t t = 0; t < rows; ++t) y[t * out + r] = dot_row(row.data(), x + t * in, in);
      }
    });
    return y;
  }

  // Rotates each `width`-wide head of each row by its position's angles, pairing values as the model's rope mode does
  // (by the sliding layers' frequencies where `sliding`).
  void rope(std::vector<double>& x, size_t rows, size_t heads, const std::vector<int>& positions, bool sliding) const {
    const size_t width = m.head_dim, half = width / 2;
    const std::vector<double>& freq = sliding ? inv_freq_sliding : inv_freq;
    for (size_t t = 0; t < rows; ++t)
      for (size_t h = 0; h < heads; ++h) {
        double* v = x.data() + (t * heads + h) * width;
        for (size_t i = 0; i < half; ++i) {
          double theta = double(positions[t]) * freq[i];
          double c = std::cos(theta), s = std::sin(theta);
          if (rope_factor != 1.0) c *= rope_factor, s *= rope_factor;
          size_t a = m.rope_mode == model::RopeMode::Adjacent ? 2 * i : i;
          size_t b = m.rope_mode == model::RopeMode::Adjacent ? 2 * i + 1 : i + half;
          double x0 = v[a], x1 = v[b];
          v[a] = x0 * c - x1 * s;
          v[b] = x0 * s + x1 * c;
        }
      }
  }

  // Causal grouped-query attention of the chunk's queries, each over its sequence's cache (which already holds the
  // chunk's keys): on a sliding layer over the last sliding_window positions only; with sinks, each head's sink logit
  // in the softmax's denominator (its value none).
  std::vector<double> attend(const std::vector<double>& q, const Rows& at, size_t layer) {
    const size_t rows = at.pos.size();
    const size_t hd = m.head_dim, vd = m.value_dim, heads = m.heads, group = m.group();
    const size_t k_width = size_t{m.kv_heads} * hd, v_width = size_t{m.kv_heads} * vd;
    const double scale = 1.0 / std::sqrt(double(m.attention_width()));
    const std::vector<double>& sinks = vectors[layer].sinks;
    const bool sliding = m.layer[layer].sliding;
    std::vector<double> out(rows * heads * vd, 0.0);
    pool.run(rows * heads, [&](size_t task, unsigned worker) {
      const size_t t = task / heads, h = task % heads, kvh = h / group;
      const size_t n = size_t(at.pos[t]) + 1;
      const std::vector<double>& K = seqs[at.seq[t]].k[layer];
      const std::vector<double>& V = seqs[at.seq[t]].v[layer];
      // llama.cpp's LLAMA_SWA_TYPE_STANDARD: the key at position j is masked when p - j >= sliding_window.
      const size_t first = sliding && n > m.sliding_window ? n - m.sliding_window : 0;
      const double* qv = q.data() + (t * heads + h) * hd;
      std::vector<double>& score = score_buffer[worker];
      score.resize(n);
      double top = -INFINITY;
      for (size_t j = first; j < n; ++j) {
        score[j] = softcap(dot(K.data() + j * k_width + kvh * hd, qv, hd) * scale, m.attn_softcap);
        top = std::max(top, score[j]);
      }
      if (!sinks.empty()) top = std::max(top, sinks[h]);
      double sum = 0;
      for (size_t j = first; j < n; ++j) sum += score[j] = std::exp(score[j] - top);
      if (!sinks.empty()) sum += std::exp(sinks[h] - top);
      double* o = out.data() + (t * heads + h) * vd;
      for (size_t j = first; j < n; ++j) {
        const double* vv = V.data() + j * v_width + kvh * vd;
        const double p = score[j] / sum;
        for (size_t i = 0; i < vd; ++i) o[i] += p * vv[i];
      }
    });
    return out;
  }

  // The mixture's output for each of the T rows of h (T x d_model): the router's route per row; each expert that any
  // row selected run once over the rows that selected it, from its own rows of the expert tensors (plus its biases);
  // each row's weighted expert outputs summed in its route's order; then the shared expert, scaled by its gate.
  // Every sum is per row and in a fixed order, so a row's result does not depend on the other rows of its chunk.
  std::vector<double> mixture(const model::Layer& l, const LayerVectors& lv, const std::vector<double>& h, size_t T) {
    const size_t d = m.d_model, f = m.expert_ffn, k = m.experts_used;
    std::vector<double> logits = matmul(*l.router, h, T);
    add_bias(logits, lv.router_bias);
    std::vector<Route> routes;
    std::vector<std::vector<std::pair<size_t, size_t>>> users(m.experts);  // per expert: (row, slot in its route)
    for (size_t t = 0; t < T; ++t) {
      routes.push_back(route(m, logits.data() + t * m.experts));
      for (size_t s = 0; s < k; ++s) users[routes[t].experts[s]].emplace_back(t, s);
    }
    std::vector<double> expert_out(T * k * d);  // [row][slot]: the slot's expert's output, unweighted
    for (uint32_t e = 0; e < m.experts; ++e) {
      const size_t n = users[e].size();
      if (n == 0) continue;
      std::vector<double> in(n * d);
      for (size_t i = 0; i < n; ++i) std::copy_n(h.begin() + users[e][i].first * d, d, in.begin() + i * d);
      std::vector<double> gate = matmul_rows(*l.gate_exps, uint64_t{e} * f, f, in.data(), n);
      std::vector<double> up = matmul_rows(*l.up_exps, uint64_t{e} * f, f, in.data(), n);
      add_expert_bias(gate, lv.gate_exps_bias, e, f);
      add_expert_bias(up, lv.up_exps_bias, e, f);
      expert_glu(m, gate, up);
      std::vector<double> down = matmul_rows(*l.down_exps, uint64_t{e} * d, d, gate.data(), n);
      add_expert_bias(down, lv.down_exps_bias, e, d);
      for (size_t i = 0; i < n; ++i) {
        const auto [t, s] = users[e][i];
        std::copy_n(down.begin() + i * d, d, expert_out.begin() + (t * k + s) * d);
      }
    }
    std::vector<double> out(T * d, 0.0);
    for (size_t t = 0; t < T; ++t)
      for (size_t s = 0; s < k; ++s)
        for (size_t i = 0; i < d; ++i) out[t * d + i] += expert_out[(t * k + s) * d + i] * routes[t].weights[s];
    if (l.w_gate_shared) {
      std::vector<double> gate = matmul(*l.w_gate_shared, h, T), up = matmul(*l.w_up_shared, h, T);
      dense_glu(m, gate, up);
      std::vector<double> down = matmul(*l.w_down_shared, gate, T);
      for (size_t t = 0; t < T; ++t) {
        const double g = 1.0 / (1.0 + std::exp(-dot(lv.shared_gate_inp.data(), h.data() + t * d, d)));
        for (size_t i = 0; i < d; ++i) out[t * d + i] += down[t * d + i] * g;
      }
    }
    return out;
  }

  // Adds expert e's row of a [rows][experts]-shaped bias (width `n`) to each n-wide row of y; nothing when empty.
  static void add_expert_bias(std::vector<double>& y, const std::vector<double>& bias, uint32_t e, size_t n) {
    if (bias.empty()) return;
    for (size_t i = 0; i < y.size(); ++i) y[i] += bias[size_t{e} * n + i % n];
  }

  // Fresh state for `n` sequences, each at position 0.
  void sequences(size_t n) {
    seqs.assign(n, Sequence{});
    for (auto& q : seqs) {
      q.k.resize(m.layers);
      q.v.resize(m.layers);
    }
  }

  void check(std::span<const int32_t> tokens, int pos) const {
    if (tokens.empty()) throw Error("the reference needs at least one token");
    for (int32_t t : tokens)
      if (t < 0 || uint32_t(t) >= m.vocab)
        throw Error("token " + std::to_string(t) + " is outside the vocabulary (0.." + std::to_string(m.vocab - 1) +
                    ")");
    if (m.context && uint64_t(pos) + tokens.size() > m.context)
      throw Error("position " + std::to_string(pos + tokens.size() - 1) + " is past the context length " +
                  std::to_string(m.context));
  }

  // A part of a run: tokens at the next positions of one sequence.
  struct Segment {
    size_t seq;
    std::span<const int32_t> tokens;
  };

  // Runs the segments' tokens as one chunk, each at its sequence's next positions; the logits of every row (all_rows)
  // or of each segment's last, in the segments' order. Every weight row is read once for all of them, and a row's
  // result depends on its own sequence alone (each sum is a row's, in a fixed order): the same as run one at a time.
  std::vector<float> run(const std::vector<Segment>& segments, bool all_rows) {
    Rows at;
    std::vector<int32_t> tokens;
    for (const Segment& g : segments) {
      check(g.tokens, seqs[g.seq].pos);
      for (size_t i = 0; i < g.tokens.size(); ++i) {
        at.seq.push_back(g.seq);
        at.pos.push_back(seqs[g.seq].pos + int(i));
      }
      tokens.insert(tokens.end(), g.tokens.begin(), g.tokens.end());
    }
    const size_t T = tokens.size(), d = m.d_model;
    const size_t k_width = size_t{m.kv_heads} * m.head_dim, v_width = size_t{m.kv_heads} * m.value_dim;
    const double eps = m.norm_eps;

    std::vector<double> x(T * d);
    {
      const uint64_t row_bytes = ggml::row_bytes(m.token_embd->type, d);
      std::vector<float> row(d);
      for (size_t t = 0; t < T; ++t) {
        ggml::dequantize(m.token_embd->type, file.data(*m.token_embd).data() + uint64_t(tokens[t]) * row_bytes, row);
        // (gemma3's scale in f32, as llama.cpp's ggml_scale of the gathered rows)
        if (m.embed_scale != 1.f)
          for (float& e : row) e *= m.embed_scale;
        std::copy(row.begin(), row.end(), x.begin() + t * d);
      }
    }
    for (size_t li = 0; li < m.layers; ++li) {
      const model::Layer& l = m.layer[li];
      const LayerVectors& lv = vectors[li];
      std::vector<double> h = x;
      rms_norm(h.data(), T, d, lv.attn_norm, eps);
      std::vector<double> q = matmul(*l.wq, h, T), k = matmul(*l.wk, h, T), v = matmul(*l.wv, h, T);
      add_bias(q, lv.bq);
      add_bias(k, lv.bk);
      add_bias(v, lv.bv);
      if (!lv.q_norm.empty()) {
        rms_norm(q.data(), T * m.heads, m.head_dim, lv.q_norm, eps);
        rms_norm(k.data(), T * m.kv_heads, m.head_dim, lv.k_norm, eps);
      }
      rope(q, T, m.heads, at.pos, l.sliding);
      rope(k, T, m.kv_heads, at.pos, l.sliding);
      size_t row = 0;
      for (const Segment& g : segments) {
        Sequence& sq = seqs[g.seq];
        const size_t n = g.tokens.size();
        sq.k[li].resize(size_t(sq.pos) * k_width);
        sq.v[li].resize(size_t(sq.pos) * v_width);
        sq.k[li].insert(sq.k[li].end(), k.begin() + row * k_width, k.begin() + (row + n) * k_width);
        sq.v[li].insert(sq.v[li].end(), v.begin() + row * v_width, v.begin() + (row + n) * v_width);
        row += n;
      }
      std::vector<double> attn = matmul(*l.wo, attend(q, at, li), T);
      add_bias(attn, lv.bo);
      if (!lv.attn_post_norm.empty()) rms_norm(attn.data(), T, d, lv.attn_post_norm, eps);
      for (size_t i = 0; i < x.size(); ++i) x[i] += attn[i];

      h = x;
      rms_norm(h.data(), T, d, lv.ffn_norm, eps);
      if (m.has_experts()) {
        std::vector<double> moe = mixture(l, lv, h, T);
        for (size_t i = 0; i < x.size(); ++i) x[i] += moe[i];
        continue;
      }
      std::vector<double> gate = matmul(*l.w_gate, h, T), up = matmul(*l.w_up, h, T);
      dense_glu(m, gate, up);
      std::vector<double> down = matmul(*l.w_down, gate, T);
      if (!lv.ffn_post_norm.empty()) rms_norm(down.data(), T, d, lv.ffn_post_norm, eps);
      for (size_t i = 0; i < x.size(); ++i) x[i] += down[i];
    }
    for (const Segment& g : segments) seqs[g.seq].pos += int(g.tokens.size());

    std::vector<double> h;
    if (all_rows) {
      h = std::move(x);
    } else {
      size_t end = 0;
      for (const Segment& g : segments) {
        end += g.tokens.size();
        h.insert(h.end(), x.begin() + (end - 1) * d, x.begin() + end * d);
      }
    }
    const size_t rows = h.size() / d;
    rms_norm(h.data(), rows, d, output_norm, eps);
    std::vector<double> logits = matmul(*m.output, h, rows);
    for (double& z : logits) z = softcap(z, m.final_softcap);
    return {logits.begin(), logits.end()};
  }
};

Reference::Reference(const gguf::File& file, const model::Model& model, unsigned threads)
    : impl_(std::make_unique<Impl>(file, model, threads)) {}

Reference::~Reference() = default;

void Reference::reset() {
  impl_->sequences(1);
}

std::vector<float> Reference::forward(std::span<const int32_t> tokens) {
  return impl_->run({{0, tokens}}, true);
}

int Reference::position() const {
  return impl_->seqs[0].pos;
}

Generation Reference::generate(std::span<const int32_t> prompt, int n_gen) {
  return std::move(generate(std::vector<Request>{{prompt, n_gen}}).front());
}

std::vector<Generation> Reference::generate(std::span<const Request> requests, size_t max_positions) {
  Impl& r = *impl_;
  for (const Request& q : requests) r.check(q.prompt, 0);
  std::vector<Generation> out(requests.size());
  // The requests in groups of consecutive ones whose caches hold at most max_positions in all (a group at least one),
  // run last group first, so that the caches are the first group's at the end.
  std::vector<std::pair<size_t, size_t>> groups;  // [first, end)
  for (size_t first = 0, held = 0, i = 0; i < requests.size(); ++i) {
    const size_t n = requests[i].prompt.size() + size_t(std::max(0, requests[i].n_gen - 1));
    if (i > first && held + n > max_positions) {
      groups.emplace_back(first, i);
      first = i, held = 0;
    }
    held += n;
    if (i + 1 == requests.size()) groups.emplace_back(first, i + 1);
  }
  if (groups.empty()) r.sequences(1);
  for (auto g = groups.rbegin(); g != groups.rend(); ++g) {
    const auto [first, end] = *g;
    r.sequences(end - first);
    // Each step: the group's sequences still generating, as one chunk (the first step every prompt, as generate()
    // prefills one that generates nothing).
    for (int step = 0;; ++step) {
      std::vector<Impl::Segment> segments;
      for (size_t i = first; i < end; ++i) {
        if (step == 0)
          segments.push_back({i - first, requests[i].prompt});
        else if (step < requests[i].n_gen)
          segments.push_back({i - first, std::span<const int32_t>(&out[i].tokens.back(), 1)});
      }
      if (segments.empty()) break;
      const std::vector<float> logits = r.run(segments, false);
      const size_t vocab = r.m.vocab;
      for (size_t j = 0; j < segments.size(); ++j) {
        const size_t i = first + segments[j].seq;
        if (step >= requests[i].n_gen) continue;
        const auto row = logits.begin() + j * vocab;
        out[i].logits.insert(out[i].logits.end(), row, row + vocab);
        out[i].tokens.push_back(int32_t(std::max_element(row, row + vocab) - row));
      }
    }
  }
  return out;
}

}  // namespace lt::reference
