// Successive halving as a strategy: a first round of budget draws screened with few repetitions, the best 1/eta of
// each round measured again with eta times as many, the last round verified; where none of the last round passes its
// verification (a race under --stagger, wrong results), the next best of the round before is verified in its place,
// until one passes or none is left, so that a job whose winner fails its checks still ends with a verified one.
#include <algorithm>
#include <map>
#include <set>

#include "coordinator/strategy.hpp"
#include "draws.hpp"

namespace lt::coord {
namespace {

class Halving : public Strategy {
 public:
  Halving(const SearchSpace& space, SearchSettings s, const nlohmann::json& saved)
      : s_(std::move(s)), draws_(space, s_.budget, s_.seed, saved.value("draws", nlohmann::json::object())) {
    stage_ = saved.value("stage", 0u);
    proposed_ = saved.value("proposed", size_t{0});
    finished_ = saved.value("finished", false);
    for (auto& n : saved.value("sizes", nlohmann::json::array())) sizes_.push_back(n.get<uint64_t>());
    for (auto& h : saved.value("members", nlohmann::json::array())) member_hashes_.push_back(h.get<std::string>());
    for (auto& h : saved.value("reserve", nlohmann::json::array())) reserve_.push_back(h.get<std::string>());
    last_ = saved.value("last", false);
  }
  std::string name() const override { return "halving"; }

  std::vector<Proposal> propose(size_t n, size_t open) override {
    std::vector<Proposal> out;
    while (!finished_ && out.size() < n) {
      if (stage_ == 0 && !draws_.exhausted()) {
        auto k = draws_.next();
        if (!k) continue;  // the draws ran short: the round is what was drawn
        ++proposed_;
        out.push_back(candidate(*k, ""));
        continue;
      }
      if (stage_ > 0 && proposed_ < member_hashes_.size()) {
        auto& m = seen_.at(member_hashes_[proposed_++]);
        out.push_back(candidate(m.knobs, m.key));
        continue;
      }
      // The round is proposed: the next waits for its results.
      if (!out.empty() || open > 0) break;
      if (last_ || final_round(stage_, round_size(stage_))) {
        last_ = true;  // (the last round stays the last as reserves join it)
        if (stage_ > 0 && !final_passed() && !reserve_.empty()) {  // (the next best of the round before, verified)
          member_hashes_.push_back(reserve_.front());
          reserve_.erase(reserve_.begin());
          sizes_[stage_] = member_hashes_.size();
          continue;
        }
        finished_ = true;
        break;
      }
      promote();
    }
    return out;
  }

  void take(const Observation& o) override {
    auto& m = seen_[key_hash(o.key)];
    m.key = o.key;
    m.knobs = o.knobs;
    if (o.valid) m.ms[o.stage] = o.objective_ms;
  }

  uint64_t planned() const override {
    uint64_t total = 0;
    for (uint32_t s = 0; s < stage_; ++s) total += sizes_.at(s);
    uint64_t size = round_size(stage_);
    for (uint32_t s = stage_;; ++s) {
      total += size;
      if ((last_ && s == stage_) || final_round(s, size)) break;
      size = (size + s_.options.eta - 1) / s_.options.eta;
    }
    return total;
  }
  bool done() const override { return finished_; }
  nlohmann::json save() const override {
    return {{"settings", to_json(s_)}, {"draws", draws_.save()}, {"stage", stage_},
            {"proposed", proposed_},   {"finished", finished_},   {"sizes", sizes_},
            {"members", member_hashes_}, {"reserve", reserve_}, {"last", last_}};
  }
  std::string note() const override {
    if (finished_) return "";
    return "round " + std::to_string(stage_ + 1) + ": " + std::to_string(round_size(stage_)) + " configurations, " +
           std::to_string(repetitions(stage_)) + " repetitions each" +
           (last_ || final_round(stage_, round_size(stage_)) ? ", verified" : ", screened");
  }

 private:
  struct Seen {
    std::string key;
    nlohmann::json knobs;
    std::map<uint32_t, double> ms;  // the objective of each round it passed the checks in
  };

  uint32_t repetitions(uint32_t stage) const {
    uint32_t r = s_.options.halving_repetitions;
    for (uint32_t i = 0; i < stage; ++i) r *= s_.options.eta;
    return r;
  }
  uint64_t round_size(uint32_t stage) const {
    if (stage == 0) return draws_.total();
    return stage < sizes_.size() ? sizes_[stage] : member_hashes_.size();
  }
  bool final_round(uint32_t stage, uint64_t size) const { return size <= 1 || stage + 1 >= s_.options.max_stages; }
  // Whether a configuration of the current (last) round passed its checks.
  bool final_passed() const {
    for (const std::string& h : member_hashes_)
      if (auto it = seen_.find(h); it != seen_.end() && it->second.ms.count(stage_)) return true;
    return false;
  }
  Proposal candidate(const nlohmann::json& knobs, const std::string& key) const {
    bool last = last_ || final_round(stage_, round_size(stage_));
    return {knobs, key, stage_, repetitions(stage_), last, stage_ == 0, "halving"};
  }

  // The best ceil(size / eta) of the finished round that passed its checks, fastest first, start the next round.
  void promote() {
    const uint64_t size = round_size(stage_);
    if (sizes_.size() <= stage_) sizes_.resize(stage_ + 1, 0);
    sizes_[stage_] = size;
    const size_t keep = size_t((size + s_.options.eta - 1) / s_.options.eta);
    std::vector<std::pair<double, std::string>> ranked;
    for (auto& [hash, m] : seen_)
      if (auto it = m.ms.find(stage_); it != m.ms.end()) ranked.push_back({it->second, m.key});
    std::sort(ranked.begin(), ranked.end());
    member_hashes_.clear();
    reserve_.clear();
    for (size_t i = 0; i < ranked.size() && i < keep + kReserve; ++i)
      (i < keep ? member_hashes_ : reserve_).push_back(key_hash(ranked[i].second));
    if (member_hashes_.empty()) {
      finished_ = true;
      return;
    }
    ++stage_;
    proposed_ = 0;
    sizes_.resize(stage_ + 1);
    sizes_[stage_] = member_hashes_.size();
  }

  SearchSettings s_;
  Draws draws_;
  uint32_t stage_ = 0;
  size_t proposed_ = 0;
  bool finished_ = false;
  std::vector<uint64_t> sizes_;             // each started round's size
  std::vector<std::string> member_hashes_;  // the current round's configurations (after the first)
  static constexpr size_t kReserve = 8;     // (at most this many verified in a failed winner's place)
  std::vector<std::string> reserve_;        // the round before's that did not go on, fastest first
  bool last_ = false;                       // the current round is the last (verified)
  std::map<std::string, Seen> seen_;        // by key hash
};

}  // namespace

std::unique_ptr<Strategy> halving_strategy(const SearchSpace& space, const SearchSettings& s,
                                           const nlohmann::json& saved) {
  return std::make_unique<Halving>(space, s, saved);
}

}  // namespace lt::coord
