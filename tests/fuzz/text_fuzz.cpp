// The text parsers' fuzz entry point: the knobs' JSON (what a submit, a plan and a recording carry), a lane's output
// (what the worker reads back from a lane it ran) and a shape's JSON (`synth --shape`). The first byte picks the parser
// (its value mod 4: 0 and 2 the knobs, 1 the output, 3 the shape), the rest is its input. Either a parser accepts the
// text (knobs that key and read back as themselves; an output with its contract; a shape synth plans, its layers'
// tensors listed) or it raises lt::Error; anything else (a crash, another exception, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/error.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane_output.hpp"
#include "compiler/synth.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 4 == 3) {
      lt::synth::Options o;
      o.shape = lt::synth::parse_shape(text);
      if (lt::synth::plan(o).empty()) __builtin_trap();
    } else if (data[0] % 2 == 0) {
      const auto k = lt::knobs::Knobs::from_json(lt::knobs::Knobs::parse(text, "fuzz.json"));
      // A configuration read back from its own key is itself.
      if (!(lt::knobs::Knobs::from_json(lt::knobs::Knobs::parse(k.key(), "key")) == k)) __builtin_trap();
    } else {
      const auto out = lt::lane::parse_output(text);
      if (out.contract < 0) __builtin_trap();
    }
  } catch (const lt::Error&) {
  }
  return 0;
}
