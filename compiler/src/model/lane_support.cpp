// What of a recognized model the lane compiler runs: the line between the CPU reference's architectures and the
// lane's, drawn in one place until the lane runs them all.
#include <string>
#include <vector>

#include "compiler/error.hpp"
#include "compiler/model.hpp"

namespace lt::model {

void check_lane_supports(const Model& m) {
  std::vector<std::string> missing;
  bool sinks = false, sliding = false, out_bias = false;
  for (const Layer& l : m.layer) {
    sinks |= l.sinks != nullptr;
    sliding |= l.sliding;
    out_bias |= l.bo != nullptr;
  }
  // (the lane runs the mixtures: qwen2moe's and qwen3moe's, and gpt-oss's experts with their biases and clamp)
  if (sinks) missing.push_back("attention sinks");
  if (sliding) missing.push_back("sliding-window attention");
  if (m.scaling.kind == RopeScaling::Kind::Yarn) missing.push_back("YaRN rope scaling");
  if (out_bias) missing.push_back("an output projection bias");
  if (missing.empty()) return;
  std::string list;
  for (size_t i = 0; i < missing.size(); ++i)
    list += (i == 0 ? "" : i + 1 == missing.size() ? " or " : ", ") + missing[i];
  throw Error(m.name + " (" + m.architecture + "): the lane does not run " + list +
              " yet; the CPU reference does (lane-tune reference)");
}

}  // namespace lt::model
