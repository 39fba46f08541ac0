// The cost model's parts: feature rows, XGBoost's trees, launch families.
#include "cost_model.hpp"

#include <xgboost/c_api.h>

#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "compiler/error.hpp"

namespace lt::coord::cost {
namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw lt::Error(std::string("the cost model: ") + what + ": " + XGBGetLastError());
}

// XGBoost prints warnings of its own; the coordinator's log is ours.
void quiet() {
  static std::once_flag once;
  std::call_once(once, [] {
    XGBSetGlobalConfig(R"({"verbosity": 0})");
    XGBRegisterLogCallback([](const char*) {});
  });
}

// A DMatrix over rows, freed when it goes.
struct Matrix {
  DMatrixHandle h = nullptr;
  Matrix(const std::vector<float>& rows, size_t cols) {
    check(XGDMatrixCreateFromMat(rows.data(), bst_ulong(rows.size() / cols), bst_ulong(cols),
                                 std::numeric_limits<float>::quiet_NaN(), &h),
          "rows");
  }
  ~Matrix() { XGDMatrixFree(h); }
};

}  // namespace

Features::Features(const std::vector<Dimension>& dims) {
  for (auto& d : dims) {
    bool names = !d.values.empty();
    for (auto& v : d.values) names &= v.is_string();
    dims_.push_back({d.name, d.values, names});
    columns_ += names ? d.values.size() : 1;
  }
}

void Features::append(const nlohmann::json& knobs, std::vector<float>& rows) const {
  const float missing = std::numeric_limits<float>::quiet_NaN();
  for (auto& d : dims_) {
    auto it = knobs.find(d.name);
    size_t at = d.values.size();
    if (it != knobs.end())
      for (size_t i = 0; i < d.values.size(); ++i)
        if (d.values[i] == *it) at = i;
    if (d.one_hot) {
      for (size_t i = 0; i < d.values.size(); ++i) rows.push_back(at == d.values.size() ? missing : float(at == i));
    } else {
      rows.push_back(at == d.values.size() ? missing : float(at));
    }
  }
}

Trees::Trees(Kind kind, const std::vector<float>& rows, size_t cols, const std::vector<float>& targets, uint64_t seed,
             int rounds, int depth) {
  quiet();
  if (cols == 0 || targets.empty() || rows.size() != targets.size() * cols)
    throw lt::Error("the cost model: no rows to fit");
  Matrix m(rows, cols);
  check(XGDMatrixSetFloatInfo(m.h, "label", targets.data(), bst_ulong(targets.size())), "labels");
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(&m.h, 1, &b), "booster");
  booster_ = b;
  const std::string s = std::to_string(seed % 2147483647), d = std::to_string(depth);
  const std::pair<const char*, const char*> params[] = {
      {"objective", kind == Kind::Classifier ? "binary:logistic" : "reg:squarederror"},
      {"max_depth", d.c_str()},
      {"eta", "0.2"},
      {"min_child_weight", "1"},
      {"lambda", "1"},
      {"tree_method", "hist"},
      {"max_bin", "64"},
      {"nthread", "1"},
      {"seed", s.c_str()},
      {"verbosity", "0"}};
  for (auto& [k, v] : params) check(XGBoosterSetParam(b, k, v), "parameters");
  for (int i = 0; i < rounds; ++i) check(XGBoosterUpdateOneIter(b, i, m.h), "training");
}

Trees::~Trees() {
  if (booster_) XGBoosterFree(static_cast<BoosterHandle>(booster_));
}

std::vector<float> Trees::predict(const std::vector<float>& rows, size_t cols) const {
  if (rows.empty()) return {};
  Matrix m(rows, cols);
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(static_cast<BoosterHandle>(booster_), m.h, 0, 0, 0, &n, &out), "prediction");
  return std::vector<float>(out, out + n);
}

const char* family_name(int f) {
  static const char* const names[] = {"step projections",  "step attention",  "step rest",
                                      "chunk projections", "chunk attention", "chunk rest"};
  return f >= 0 && f < kFamilies ? names[f] : "?";
}

int family_of(const std::string& kind, int rows) {
  const bool chunk = rows > 1;
  int f = StepRest;
  if (kind.rfind("gemv", 0) == 0 || kind.rfind("gemm", 0) == 0 || kind.rfind("quantize", 0) == 0)
    f = StepProjections;
  else if (kind.rfind("attention", 0) == 0)
    f = StepAttention;
  return chunk ? f + ChunkProjections : f;
}

std::vector<double> family_ms(const nlohmann::json& profile, Objective o) {
  if (!profile.is_object() || !profile.contains("launches") || !profile["launches"].is_array() ||
      profile["launches"].empty())
    return {};
  std::map<int, double> runs;  // of each form in the workload, by rows
  if (profile.contains("forms") && profile["forms"].is_array())
    for (auto& f : profile["forms"]) runs[f.value("rows", 1)] += f.value("runs", 0.0);
  std::vector<double> ms(kFamilies, 0.0);
  for (auto& l : profile["launches"]) {
    const int rows = std::max(1, l.value("rows", 1));
    const double us = l.value("us", 0.0);
    if (!std::isfinite(us)) continue;
    double weight = 0;
    switch (o) {
      case Objective::Decode:
        weight = rows == 1 ? 1 : 0;
        break;
      case Objective::Prefill:
        weight = rows > 1 ? (runs.count(rows) ? runs[rows] : 1) : 0;
        break;
      case Objective::Workload:
        weight = runs.count(rows) ? runs[rows] : 1;
        break;
    }
    ms[family_of(l.value("kind", ""), rows)] += us * weight / 1000.0;
  }
  return ms;
}

}  // namespace lt::coord::cost
