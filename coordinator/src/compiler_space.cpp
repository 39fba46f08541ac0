// The coordinator's view of the compiler: GPU kinds, checkpoint recognition and knob spaces from lt::knobs.
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane_schedule.hpp"
#include "compiler/model.hpp"
#include "coordinator/space.hpp"

namespace lt::coord {
namespace {

const std::vector<GpuKind>& kinds() {
  static const std::vector<GpuKind> k = {
      {"a100", 108, 80},  {"a10", 72, 86},      {"a40", 84, 86},   {"l4", 58, 89},
      {"l40s", 142, 89},  {"h100", 132, 90},    {"h200", 132, 90}, {"gh200", 132, 90},
      {"b200", 148, 100}, {"rtx4090", 128, 89}, {"t4", 40, 75},    {"v100", 80, 70},
  };
  return k;
}

// The knob space of one checkpoint on one GPU kind, backed by lt::knobs::Space; its size counted once.
class KnobSpace : public SearchSpace {
 public:
  KnobSpace(knobs::Space s, std::shared_ptr<const void> keep, uint64_t size)
      : keep_(std::move(keep)), space_(std::move(s)), size_(size) {}
  std::vector<Dimension> dimensions() const override {
    std::vector<Dimension> v;  // (the knobs that vary: one of a single value is no feature and no mutation)
    for (auto& d : space_.domains)
      if (d.values.size() > 1) v.push_back({d.name, d.values});
    return v;
  }
  uint64_t size() const override { return size_; }
  uint64_t raw_size() const override { return space_.raw_size(); }
  std::optional<nlohmann::json> at(uint64_t ordinal) const override {
    knobs::Knobs k = space_.at(ordinal);
    if (!space_.allows(k)) return std::nullopt;
    return k.to_json();
  }
  bool contains(const nlohmann::json& k) const override {
    try {
      return space_.why_invalid(knobs::Knobs::from_json(k)).empty();
    } catch (const lt::Error&) {
      return false;
    }
  }
  nlohmann::json sample(std::mt19937_64& rng) const override {
    // (a search draws thousands a turn: the sampler's tables once, then microseconds a draw)
    std::call_once(sampler_once_, [&] { sampler_ = std::make_unique<knobs::Sampler>(space_); });
    return sampler_->draw(rng).to_json();
  }
  std::string key(const nlohmann::json& k) const override { return knobs::Knobs::from_json(k).key(); }

 private:
  std::shared_ptr<const void> keep_;  // the space's model points into it
  knobs::Space space_;
  uint64_t size_;
  mutable std::once_flag sampler_once_;
  mutable std::unique_ptr<knobs::Sampler> sampler_;
};

class RealCompiler : public Compiler {
 public:
  CheckpointInfo inspect(const std::filesystem::path& checkpoint) override {
    auto f = gguf::File::open(checkpoint);
    auto m = model::recognize(f);
    return {m.architecture, m.name, m.vocab, uint32_t(knobs::lane_context(m, knobs::Knobs{})), m.context};
  }
  std::unique_ptr<SearchSpace> space(const std::filesystem::path& checkpoint, const GpuKind& gpu,
                                     uint32_t context) override {
    auto file = std::make_shared<const gguf::File>(gguf::File::open(checkpoint));
    knobs::Space s = knobs::space(model::recognize(*file), knobs::Target{gpu.sms, gpu.arch, int(context)});
    const uint64_t size = counted_size(s, file->digest());
    return std::make_unique<KnobSpace>(std::move(s), file, size);
  }

 private:
  // A space's size, counted once a process for each checkpoint header (the model and its tensors' formats, all the
  // space depends on) and target: counting walks millions of points, seconds of a core, and a checkpoint's space is
  // built for each job, GPU kind and restored search.
  static uint64_t counted_size(const knobs::Space& s, uint64_t header) {
    static std::mutex mu;
    static std::map<std::tuple<uint64_t, int, int, int>, uint64_t> counted;
    const auto key = std::make_tuple(header, s.target.sms, s.target.arch, s.target.context);
    {
      std::lock_guard lock(mu);
      if (auto it = counted.find(key); it != counted.end()) return it->second;
    }
    const uint64_t n = s.size();  // (outside the lock: other spaces are counted meanwhile)
    std::lock_guard lock(mu);
    return counted.emplace(key, n).first->second;
  }
};
}  // namespace

const GpuKind* find_gpu_kind(const std::string& name) {
  for (auto& k : kinds())
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<std::string> gpu_kind_names() {
  std::vector<std::string> v;
  for (auto& k : kinds()) v.push_back(k.name);
  return v;
}

std::unique_ptr<Compiler> compiler() {
  return std::make_unique<RealCompiler>();
}

std::unique_ptr<SearchSpace> knob_space(const knobs::Space& s, std::shared_ptr<const void> keep) {
  return std::make_unique<KnobSpace>(s, std::move(keep), s.size());
}

}  // namespace lt::coord
