// The model strategy: a cost model trained on the job's own measurements ranks candidates, and every proposal is a
// whole lane, screened first (timed and profiled, no --stagger) and the best few verified.
//
// The cost model knows the launches: each screened measurement's profile splits its objective into launch families
// (the decode step's and the chunks' projections, attention and the rest, cost_model.hpp), one model is fitted per
// family plus one for the residual, and a candidate's predicted objective is their sum, so one measurement of a
// whole lane teaches every family at once (Ansor's tasks, composed and confirmed by measuring the lane). A
// classifier learns which configurations fail (compile errors, races, does_not_fit, wrong results: deterministic).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "compiler/error.hpp"
#include "coordinator/strategy.hpp"
#include "cost_model.hpp"

namespace lt::coord {
namespace {

// Hand-written configurations that are strong on the lanes measured so far (bench/RESULTS.md): the first screens,
// each taken when it (or a variant with smaller chunks, without pdl_first, pdl, gemm_tile or fuse_glu) is a point of the
// space.
const char* const kPriors[] = {
    // (the record's set: one split, the decode step's rope in its attention, the K-quant headers' layout, chunks of 512
    // whose large GEMMs run on Hopper's wgmma, a small model's logits in gemv_short's form (a checkpoint without such
    // a matrix takes the variant without it): llama-3.1-8b Q4_K_M decode 506 tok/s against llama.cpp's 270,
    // prefill(512) 16,387 against 9,053; qwen3-0.6b 1,760 against 736, 84,614 against 33,385; session 27's record)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":512,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"kv_cache":"f16",
        "attn_mma":2,"attn_splits":1,"gemv_short":true})",
    // (the same with the fused gate/up GEMV staging the int8 copy's row in shared memory: llama-3.1-8b Q4_K_M's decode
    // 541 -> 551 tok/s, qwen3-0.6b's 2,041 -> 2,014; session 32)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":512,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"kv_cache":"f16",
        "attn_mma":2,"attn_splits":1,"gemv_short":true,"glu_stage":true})",
    // (a large model's GEMVs two rows a warp in blocks of 4 warps, v in the q/k launch, 16 splits over a bf16 cache:
    // session 50's H200 tuning choice for llama-3.1-8b Q4_K_M, with 2 rows a warp where it chose 1: on an H100 its
    // decode 448.9 -> 464.4 tok/s, logits bitwise equal, qwen3-0.6b's 0.994x (session 52); on the H200 that job had
    // screened it 1.1% slower, so a GPU kind's own screen decides)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":512,"fuse_qkv":true,"fuse_qkv_mixed":true,
        "fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":2,"gemv_rows_q6_k":2,
        "gemv_warps":4,"kv_cache":"bf16","attn_mma":2,"attn_splits":16})",
    // (the small model's whole set: each launch letting the next one start before its wait, the staged copy, and the
    // fused gate/up GEMV in blocks of a 32-group writing the down projection's copy where its rows are short:
    // qwen3-0.6b Q4_K_M's decode 1,917 -> 1,979 tok/s with glu_groups, on an H100, and 1,928 -> 2,001 side by side
    // with llama.cpp's 738; Q8_0's 1,617 -> 1,714; sessions 37-38)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":512,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"pdl_first":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,
        "kv_cache":"f16","attn_mma":2,"attn_splits":1,"gemv_short":true,"glu_stage":true,"glu_groups":true})",
    // (the small model's set with 16 splits, the decode step folding them itself past 4 tiles of positions: the tuner's
    // choice for qwen3-0.6b Q4_K_M on the default workload, a 512-token prompt and 128 generated, 81.8 ms against one
    // split's 101.4 (decode at positions 512-640 1,656 tok/s against 1,320); on an H100, session 48)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":512,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"pdl_first":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,
        "kv_cache":"f16","attn_mma":2,"attn_splits":16,"gemv_short":true,"glu_groups":true})",
    // (the same with each launch letting the next one start before its wait: qwen3-0.6b Q4_K_M's decode 1,799 -> 1,855
    // tok/s, llama-3.1-8b's 508 -> 492; session 28)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":512,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"pdl_first":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,
        "kv_cache":"f16","attn_mma":2,"attn_splits":1,"gemv_short":true})",
    // (the same with 8 splits, the decode step's attention folding them itself: qwen3-0.6b Q4_K_M's decode at
    // positions 512-640 982 -> 1,262 tok/s, at 5-133 0.98 of one split's; session 25)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":512,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"kv_cache":"f16",
        "attn_mma":2,"attn_splits":8})",
    // (the same with 4 splits: the gemmas' heads 256 wide on the tensor cores, gemma2-2b Q4_K_M's decode after 512
    // tokens 1.643 ms/token at one split, 1.346 at 4; gemma3-1b's 1.212 and 0.985; after 5 tokens 4 splits within 2%
    // of one; on an H100, session 44)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":512,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"kv_cache":"f16",
        "attn_mma":2,"attn_splits":4})",
    // (the same with 32 splits, a long context's (a lane of more than 4,096 positions): llama-3.1-8b Q4_K_M's decode at
    // depth 32k 311 tok/s against llama.cpp's 181; session 30)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":512,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"kv_cache":"f16",
        "attn_mma":2,"attn_splits":32})",
    // (the chunks' GEMMs in f16 beside the f16 cache and attention on the tensor cores, Q6_K matrices 2 rows a warp:
    // llama-3.1-8b Q4_K_M prefill(512) 11,192 tok/s against the int8 tiled GEMMs' 6,128 and llama.cpp's 9,318,
    // decode 362 against 269; session 14)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"kv_cache":"f16",
        "attn_mma":2,"attn_splits":16})",
    // (attention on the tensor cores over an f16 cache: qwen3-0.6b's workload of a 2,048-token prompt 227 -> 120 ms,
    // llama-3.1-8b's decode at depth 32k 131 -> 187 tok/s; session 12)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_tile":128,
        "kv_cache":"f16","attn_mma":2,"attn_splits":16})",
    // (llama.cpp's Q4_K_M and Q5_K_M: their Q6_K matrices 2 rows a warp, the 4- and 5-bit ones 1; session 10)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_tile":128})",
    R"({"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,
        "fuse_norm":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":2,"gemm_tile":128})",
    R"({"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true})",
    R"({"numerics":"dequant","max_chunk":64,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"fuse_norm":true,
        "pdl":true,"gemv_rows_per_warp":2})",
    // (the chunks' GEMMs in f16, gemm_half: the 8B's fused gate/up GEMM alone 1.5-1.7x the int8 tiled one, session 13;
    // under dequant, an f16 or bf16 checkpoint's chunks on the tensor cores instead of GEMV slabs)
    R"({"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,
        "fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"kv_cache":"f16","attn_mma":2,
        "attn_splits":16})",
    R"({"numerics":"dequant","gemm_half":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,
        "pdl":true,"gemv_rows_per_warp":2,"kv_cache":"f16","attn_mma":2,"attn_splits":16})",
    // (the mixtures' set, chunks of 512 as llama.cpp's ubatch: each expert's weights read once for more pairs;
    // qwen3-30b-a3b Q8_0 prefill(512) 1.15x llama.cpp, decode 1.08x; gpt-oss-20b MXFP4 1.64x and 1.35x; verified on
    // their trained 2-layer shapes; sessions 17-19)
    R"({"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"pdl":true,"cuda_graphs":true,
        "kv_cache":"f16","attn_mma":2,"max_chunk":512})",
};

constexpr size_t kInitial = 16;    // screens before the cost model ranks (priors, warm start, random)
constexpr size_t kMinTrain = 8;    // measured configurations the cost model needs
constexpr size_t kFront = 3;       // the best this many screened configurations are verified,
constexpr double kWithin = 0.005;  // those within this share of the best's objective (a screen's noise, session 40)
constexpr size_t kPool = 2000;     // random candidates scored per batch, besides the mutations of the best
constexpr size_t kParents = 8;     // the best measured configurations mutated
constexpr double kExplore = 0.15;  // the share of a batch drawn from the pool at random

// Failures a configuration does not own: the plan was lost, cancelled, not answered, or could not be read.
bool incidental(const std::string& failure) {
  return failure == "lost" || failure == "cancelled" || failure == "not_recorded" || failure == kBadPlan;
}

// Mixes the job's seed with a counter (splitmix64).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class ModelSearch : public Strategy {
 public:
  ModelSearch(const SearchSpace& space, SearchSettings s, const nlohmann::json& saved)
      : space_(space), s_(std::move(s)), features_(space.dimensions()) {
    const uint64_t size = space.size();
    screens_budget_ = std::min<uint64_t>(s_.budget ? s_.budget : s_.options.model_budget, size);
    screens_budget_ = saved.value("screens_budget", screens_budget_);
    counter_ = saved.value("counter", uint64_t{0});
    exhausted_ = saved.value("exhausted", false);
    for (auto& h : saved.value("screens", nlohmann::json::array())) screens_.insert(h.get<std::string>());
    for (auto& h : saved.value("verifies", nlohmann::json::array())) verifies_.insert(h.get<std::string>());
    // The priors and the warm start, in the order they are screened.
    for (const char* text : kPriors) {
      auto p = nlohmann::json::parse(text);
      for (auto& variant : variants(p))
        if (space.contains(variant)) {
          add_seed(variant, "prior");
          break;
        }
    }
    size_t warm = 0;
    for (auto& w : s_.warm)
      if (warm < s_.options.warm && space.contains(w.knobs) && add_seed(w.knobs, w.origin)) ++warm;
  }

  std::string name() const override { return "model"; }

  std::vector<Proposal> urgent() override {
    std::vector<Proposal> out;
    if (!exhausted_) verify_front(kFront, out);
    return out;
  }

  std::vector<Proposal> propose(size_t n, size_t open) override {
    std::vector<Proposal> out;
    if (exhausted_) return out;
    verify_front(n, out);  // the front first: the best screened configurations not verified yet

    if (out.size() < n && screens_.size() < screens_budget_) {
      auto screens = next_screens(std::min<uint64_t>(n - out.size(), screens_budget_ - screens_.size()));
      if (screens.empty()) screens_budget_ = screens_.size();  // nothing left to draw
      for (auto& c : screens) {
        screens_.insert(key_hash(c.key));
        out.push_back(std::move(c));
      }
    }
    if (out.empty() && open == 0 && screens_.size() >= screens_budget_) exhausted_ = true;
    ++counter_;
    return out;
  }

  void take(const Observation& o) override {
    auto& r = records_[key_hash(o.key)];
    r.key = o.key;
    r.knobs = o.knobs;
    if (!o.valid && !incidental(o.failure)) r.bad = true;
    if (o.valid && o.verified) {
      r.verified = true;
      r.verified_ms = o.objective_ms;
    }
    if (o.stage == 0 || !r.screen) {
      if (o.valid || !incidental(o.failure)) r.screen = o;
    }
    fresh_ = true;
  }

  uint64_t planned() const override { return screens_budget_ + verifies_.size(); }
  bool done() const override { return exhausted_; }

  nlohmann::json save() const override {
    return {{"settings", to_json(s_)},
            {"screens_budget", screens_budget_},
            {"counter", counter_},
            {"exhausted", exhausted_},
            {"screens", std::vector<std::string>(screens_.begin(), screens_.end())},
            {"verifies", std::vector<std::string>(verifies_.begin(), verifies_.end())}};
  }

  std::string note() const override {
    std::string n = "model: " + std::to_string(screens_.size()) + " of " + std::to_string(screens_budget_) +
                    " screened, " + std::to_string(verifies_.size()) + " verifications";
    std::set<std::string> warm_jobs;
    size_t warm = 0;
    for (auto& sd : seeds_)
      if (sd.origin.rfind("warm:", 0) == 0) {
        ++warm;
        warm_jobs.insert(sd.origin.substr(5));
      }
    if (warm) {
      std::string jobs;
      for (auto& j : warm_jobs) jobs += (jobs.empty() ? "" : ", ") + j;
      n += "; warm start: " + std::to_string(warm) + " configurations of job" + (warm_jobs.size() > 1 ? "s " : " ") +
           jobs;
    }
    return n;
  }

 private:
  // What the search knows of one configuration.
  struct Record {
    std::string key;
    nlohmann::json knobs;
    std::optional<Observation> screen;  // the measurement it is ranked and learnt by
    bool bad = false;                   // it failed a check it cannot pass another time
    bool verified = false;
    double verified_ms = 0;
    std::string origin = "model";
  };

  // The prior and its variants that fit smaller contexts and older GPUs.
  static std::vector<nlohmann::json> variants(const nlohmann::json& p) {
    std::vector<nlohmann::json> v = {p};
    for (int chunk : {256, 64, 16}) {
      auto q = p;
      if (q.value("max_chunk", 0) > chunk) q["max_chunk"] = chunk;
      v.push_back(q);
    }
    // (fuse_glu: a mixture without a shared expert has no gate and up to fuse; gemv_short: a checkpoint without a
    // matrix of one round's rows has only its false; glu_stage: one without block-format matrices, or without fuse_glu;
    // glu_groups: one whose gate/up rows are longer than two units a lane)
    for (const char* knob : {"pdl_first", "pdl", "gemm_tile", "glu_stage", "fuse_glu", "gemv_short", "glu_groups"})
      for (size_t i = 0, n = v.size(); i < n; ++i) {
        auto q = v[i];
        q.erase(knob);
        v.push_back(q);
      }
    // Last, for heads the tensor cores cannot hold (attn_mma's domain 0 alone: heads past 256 wide, or past 128
    // before sm_90), each variant's attention by attn_lanes at its splits: gemma2-2b Q4_K_M's decode 3.51 ms/token
    // with lk_attention at 4 splits, 1.92 with attn_lanes at 8, on an H100 (session 43, before attn_mma took them).
    for (size_t i = 0, n = v.size(); i < n; ++i)
      if (v[i].contains("attn_mma")) {
        auto q = v[i];
        q.erase("attn_mma");
        q["attn_lanes"] = true;
        v.push_back(q);
      }
    return v;
  }

  // Adds a configuration to screen first; false when it is one already.
  bool add_seed(const nlohmann::json& knobs, const std::string& origin) {
    auto c = canonical(space_, knobs);
    std::string key = space_.key(c);
    for (auto& sd : seeds_)
      if (sd.key == key) return false;
    seeds_.push_back({c, key, origin});
    return true;
  }

  // Appends to `out`, up to `n` in all, the verifications of the front's configurations not verified or proposed yet
  // whose objective is within kWithin of the front's best: a screen clearly slower than the best known cannot become
  // the chosen one, and a verification costs 5 workloads and the staggered runs (a screen 1; an 8B job on an H100
  // spent 71 of its 150 GPU seconds on 22 verifications, 8 of them of screens 0.5-1.7% behind the best verified).
  void verify_front(size_t n, std::vector<Proposal>& out) {
    const auto v = front();
    if (v.empty()) return;
    const double bar = objective(*v.front()) * (1 + kWithin);
    for (auto* r : v) {
      if (out.size() >= n) break;
      const std::string h = key_hash(r->key);
      if (r->verified || verifies_.count(h) || objective(*r) > bar) continue;
      verifies_.insert(h);
      out.push_back({r->knobs, r->key, 1, s_.options.verify_repetitions, true, false, r->origin});
    }
  }

  // A configuration's best known objective: its verification's where measured, else its screen's.
  static double objective(const Record& r) { return r.verified ? r.verified_ms : r.screen->objective_ms; }

  // The screened configurations that passed, by their best known objective (verified first where measured), the
  // first kFront of them.
  std::vector<const Record*> front() const {
    std::vector<const Record*> v;
    for (auto& [h, r] : records_)
      if (!r.bad && r.screen && r.screen->valid) v.push_back(&r);
    std::sort(v.begin(), v.end(), [](const Record* a, const Record* b) {
      const double x = objective(*a), y = objective(*b);
      return x != y ? x < y : a->key < b->key;
    });
    if (v.size() > kFront) v.resize(kFront);
    return v;
  }

  Proposal screen(const nlohmann::json& knobs, const std::string& key, const std::string& origin) const {
    return {knobs, key, 0, s_.options.screen_repetitions, false, true, origin};
  }

  // The next `n` configurations to screen: the priors and the warm start, random draws until the cost model has data,
  // then the model's picks.
  std::vector<Proposal> next_screens(size_t n) {
    std::vector<Proposal> out;
    std::set<std::string> picked;
    auto fresh = [&](const std::string& key) {
      const std::string h = key_hash(key);
      return !screens_.count(h) && !picked.count(h);
    };
    for (auto& sd : seeds_) {
      if (out.size() >= n) return out;
      if (fresh(sd.key)) {
        picked.insert(key_hash(sd.key));
        out.push_back(screen(sd.knobs, sd.key, sd.origin));
      }
    }
    std::mt19937_64 rng(mix(s_.seed ^ mix(counter_ + 1)));
    size_t learnt = 0;
    for (auto& [h, r] : records_) learnt += r.screen ? 1 : 0;
    if (screens_.size() + out.size() < kInitial || learnt < kMinTrain) {
      for (size_t tries = 0; out.size() < n && tries < n * 50; ++tries) {
        auto k = space_.sample(rng);
        std::string key = space_.key(k);
        if (fresh(key)) {
          picked.insert(key_hash(key));
          out.push_back(screen(k, key, "random"));
        }
      }
      return out;
    }
    auto ranked = rank(rng, fresh);
    size_t best = 0;
    std::uniform_real_distribution<double> coin(0, 1);
    std::vector<bool> taken(ranked.size(), false);
    while (out.size() < n && best < ranked.size()) {
      size_t i = best;
      std::string origin = "model";
      if (coin(rng) < kExplore) {
        i = std::uniform_int_distribution<size_t>(best, ranked.size() - 1)(rng);
        origin = "explore";
      }
      if (taken[i]) {
        ++best;
        continue;
      }
      taken[i] = true;
      out.push_back(screen(ranked[i].knobs, ranked[i].key, origin));
      while (best < ranked.size() && taken[best]) ++best;
    }
    return out;
  }

  struct Scored {
    nlohmann::json knobs;
    std::string key;
    double score = 0;
  };

  // The candidate pool, best predicted first: random draws and mutations of the best measured configurations, none
  // screened before.
  template <class Fresh>
  std::vector<Scored> rank(std::mt19937_64& rng, const Fresh& fresh) {
    std::map<std::string, nlohmann::json> pool;  // by key
    auto add = [&](const nlohmann::json& k) {
      std::string key = space_.key(k);
      if (fresh(key)) pool.emplace(std::move(key), k);
    };
    const uint64_t draws = std::min<uint64_t>(kPool, space_.size() * 2);
    for (uint64_t i = 0; i < draws; ++i) add(space_.sample(rng));
    auto dims = space_.dimensions();
    for (auto* r : parents()) {
      for (auto& d : dims)
        for (auto& v : d.values) {
          if (r->knobs.contains(d.name) && r->knobs[d.name] == v) continue;
          auto k = r->knobs;
          k[d.name] = v;
          if (space_.contains(k)) add(k);
        }
      for (int m = 0; m < 24 && dims.size() > 1; ++m) {
        auto k = r->knobs;
        for (int twice = 0; twice < 2; ++twice) {
          auto& d = dims[std::uniform_int_distribution<size_t>(0, dims.size() - 1)(rng)];
          k[d.name] = d.values[std::uniform_int_distribution<size_t>(0, d.values.size() - 1)(rng)];
        }
        if (space_.contains(k)) add(k);
      }
    }
    std::vector<Scored> v;
    for (auto& [key, k] : pool) v.push_back({k, key, 0});
    if (v.empty()) return v;
    std::vector<float> rows;
    for (auto& c : v) features_.append(c.knobs, rows);
    train();
    auto predicted = predict(rows);
    std::vector<float> valid(v.size(), 1.f);
    if (validity_) valid = validity_->predict(rows, features_.columns());
    for (size_t i = 0; i < v.size(); ++i)
      v[i].score = std::max(predicted[i], floor_) / std::max(double(valid[i]), 0.05);
    std::stable_sort(v.begin(), v.end(), [](const Scored& a, const Scored& b) {
      return a.score != b.score ? a.score < b.score : a.key < b.key;
    });
    return v;
  }

  // The best measured configurations that passed, fastest first.
  std::vector<const Record*> parents() const {
    std::vector<const Record*> v;
    for (auto& [h, r] : records_)
      if (!r.bad && r.screen && r.screen->valid) v.push_back(&r);
    std::sort(v.begin(), v.end(), [](const Record* a, const Record* b) {
      return a->screen->objective_ms != b->screen->objective_ms ? a->screen->objective_ms < b->screen->objective_ms
                                                                : a->key < b->key;
    });
    if (v.size() > kParents) v.resize(kParents);
    return v;
  }

  // Fits the models to the records when results came in since the last fit.
  void train() {
    if (!fresh_) return;
    fresh_ = false;
    families_.clear();
    residual_.reset();
    validity_.reset();
    // The records in a fixed order (by key), so the fit depends on the results only.
    std::vector<const Record*> all;
    for (auto& [h, r] : records_)
      if (r.screen) all.push_back(&r);
    std::sort(all.begin(), all.end(), [](const Record* a, const Record* b) { return a->key < b->key; });
    const uint64_t seed = mix(s_.seed);
    std::vector<float> rows, labels;
    size_t good = 0;
    for (auto* r : all) {
      features_.append(r->knobs, rows);
      labels.push_back(r->bad ? 0.f : 1.f);
      good += r->bad ? 0 : 1;
    }
    if (good > 0 && good < all.size())
      validity_ =
          std::make_unique<cost::Trees>(cost::Trees::Kind::Classifier, rows, features_.columns(), labels, seed, 30, 4);
    // The objective and its families, of the configurations that passed. The families are fitted on the profiled
    // runs (a screen stopped by its cutoff has no profile); the residual on every run: the objective less the
    // families' measured times, or less their predicted times where the run has no profile.
    std::vector<float> xs, whole, xs_profiled;
    std::vector<std::vector<double>> fam;  // per run; empty: not profiled
    std::vector<std::vector<double>> fam_profiled;
    floor_ = 0;
    for (auto* r : all) {
      if (r->bad || !r->screen->valid) continue;
      features_.append(r->knobs, xs);
      whole.push_back(float(r->screen->objective_ms));
      fam.push_back(cost::family_ms(r->screen->profile, s_.objective));
      if (!fam.back().empty()) {
        features_.append(r->knobs, xs_profiled);
        fam_profiled.push_back(fam.back());
      }
      floor_ = floor_ == 0 ? r->screen->objective_ms : std::min(floor_, r->screen->objective_ms);
    }
    floor_ *= 0.5;
    if (whole.empty()) return;
    const size_t cols = features_.columns();
    if (fam_profiled.size() >= 2)
      for (int f = 0; f < cost::kFamilies; ++f) {
        std::vector<float> t;
        bool any = false;
        for (auto& one : fam_profiled) {
          t.push_back(float(one[f]));
          any |= t.back() != 0;
        }
        if (any)
          families_.push_back(std::make_unique<cost::Trees>(cost::Trees::Kind::Regression, xs_profiled, cols, t,
                                                            seed + uint64_t(f) + 1));
      }
    std::vector<float> rest = whole;
    std::vector<double> predicted(fam.size(), 0.0);
    for (auto& f : families_) {
      const auto p = f->predict(xs, cols);
      for (size_t i = 0; i < fam.size(); ++i) predicted[i] += p[i];
    }
    for (size_t i = 0; i < fam.size(); ++i) {
      if (families_.empty()) break;
      double sum = 0;
      if (fam[i].empty())
        sum = predicted[i];
      else
        for (double v : fam[i]) sum += v;
      rest[i] -= float(sum);
    }
    residual_ = std::make_unique<cost::Trees>(cost::Trees::Kind::Regression, xs, cols, rest, seed);
  }

  // The composed prediction: every family's model plus the residual's.
  std::vector<double> predict(const std::vector<float>& rows) const {
    const size_t n = rows.size() / features_.columns();
    std::vector<double> sum(n, 0.0);
    auto add = [&](const cost::Trees& t) {
      auto p = t.predict(rows, features_.columns());
      for (size_t i = 0; i < n; ++i) sum[i] += p[i];
    };
    for (auto& f : families_) add(*f);
    if (residual_) add(*residual_);
    return sum;
  }

  struct SeedConfig {
    nlohmann::json knobs;
    std::string key;
    std::string origin;
  };

  const SearchSpace& space_;
  SearchSettings s_;
  cost::Features features_;
  uint64_t screens_budget_ = 0, counter_ = 0;
  bool exhausted_ = false;
  std::set<std::string> screens_, verifies_;  // key hashes proposed
  std::vector<SeedConfig> seeds_;
  std::map<std::string, Record> records_;  // by key hash
  bool fresh_ = false;
  double floor_ = 0;
  std::vector<std::unique_ptr<cost::Trees>> families_;
  std::unique_ptr<cost::Trees> residual_, validity_;
};

}  // namespace

std::unique_ptr<Strategy> model_strategy(const SearchSpace& space, const SearchSettings& s,
                                         const nlohmann::json& saved) {
  return std::make_unique<ModelSearch>(space, s, saved);
}

}  // namespace lt::coord
