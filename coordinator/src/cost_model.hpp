// The model strategy's cost model: knobs as features, gradient-boosted trees (XGBoost's C API) over them, and a
// measurement's profile split into launch families.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/objective.hpp"
#include "coordinator/space.hpp"

namespace lt::coord::cost {

// Configurations as feature rows: a knob of numbers or booleans is one column (its value's ordinal in the domain), a
// knob of names one column per name (one-hot); a knob missing from the configuration reads as missing.
class Features {
 public:
  explicit Features(const std::vector<Dimension>& dims);
  size_t columns() const { return columns_; }
  // Appends the configuration's row to `rows`.
  void append(const nlohmann::json& knobs, std::vector<float>& rows) const;

 private:
  struct Column {
    std::string name;
    std::vector<nlohmann::json> values;
    bool one_hot = false;
  };
  std::vector<Column> dims_;
  size_t columns_ = 0;
};

// Gradient-boosted trees fitted to rows: a regression (squared error) or a classifier (the probability of 1).
// Deterministic for a seed (one thread).
class Trees {
 public:
  enum class Kind { Regression, Classifier };
  // Fits `rounds` trees to `rows` (row-major, `cols` a row) and their `targets`. REQUIRES: targets.size() rows.
  Trees(Kind kind, const std::vector<float>& rows, size_t cols, const std::vector<float>& targets, uint64_t seed,
        int rounds = 60, int depth = 5);
  ~Trees();
  Trees(const Trees&) = delete;
  Trees& operator=(const Trees&) = delete;
  // One prediction per row of `rows`.
  std::vector<float> predict(const std::vector<float>& rows, size_t cols) const;

 private:
  void* booster_ = nullptr;
};

// The launch families a measurement's profile splits into: the decode step's (rows 1) and the chunks' (rows above
// 1) projections (GEMV/GEMM kinds and quantize), attention (attention, attention_fold) and the rest (norms, rope,
// kv_append, swiglu, embed, argmax, launch gaps).
enum Family { StepProjections, StepAttention, StepRest, ChunkProjections, ChunkAttention, ChunkRest, kFamilies };
const char* family_name(int f);
// The family a launch of `kind` belongs to, in a form of `rows` rows.
int family_of(const std::string& kind, int rows);

// Each family's ms in the objective, from a profile: the decode step's per token (decode), the chunks' over the
// prompt (prefill), every form's launches times the runs of the form in the workload (workload). Empty when the
// profile has no launches.
std::vector<double> family_ms(const nlohmann::json& profile, Objective o);

}  // namespace lt::coord::cost
