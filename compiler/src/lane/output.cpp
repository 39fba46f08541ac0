// The lane output contract's parser: a run's stdout into named figures, each known line checked strictly.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/error.hpp"
#include "compiler/lane_output.hpp"

namespace lt::lane {
namespace {

// One line's words after its `NAME:` prefix, with the line for messages.
struct Line {
  std::string_view name;
  std::vector<std::string_view> words;
  std::string_view text;
  size_t number;

  [[noreturn]] void fail(const std::string& why) const {
    throw lt::Error("lane output line " + std::to_string(number) + " (`" + std::string(text) + "`): " + why);
  }
  void expect(size_t n) const {
    if (words.size() != n) fail("expected " + std::to_string(n) + " value" + (n == 1 ? "" : "s"));
  }
  int64_t integer(size_t i) const {
    int64_t v = 0;
    auto w = words[i];
    auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || p != w.data() + w.size()) fail("'" + std::string(w) + "' is not an integer");
    return v;
  }
  uint64_t count(size_t i) const {
    int64_t v = integer(i);
    if (v < 0) fail("'" + std::string(words[i]) + "' is negative");
    return uint64_t(v);
  }
  double number_at(size_t i) const {
    std::string w(words[i]);
    char* end = nullptr;
    double v = std::strtod(w.c_str(), &end);
    if (w.empty() || end != w.c_str() + w.size() || !std::isfinite(v)) fail("'" + w + "' is not a finite number");
    return v;
  }
};

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> v;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') ++j;
    if (j > i) v.push_back(s.substr(i, j - i));
    i = j;
  }
  return v;
}

}  // namespace

Output parse_output(std::string_view text) {
  Output out;
  size_t number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    size_t colon = raw.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    Line l{raw.substr(0, colon), split(raw.substr(colon + 1)), raw, number};
    bool upper = true;
    for (char c : l.name) upper = upper && ((c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9'));
    if (!upper) continue;
    auto prompt = [&]() -> PromptResult& {
      if (out.prompts.empty()) l.fail("a prompt's figure before its TOKENS line");
      return out.prompts.back();
    };
    if (l.name == "LANE_CONTRACT") {
      l.expect(1);
      out.contract = int(l.integer(0));
      if (out.contract < 1 || out.contract > kContractVersion)
        l.fail("contract version " + std::to_string(out.contract) + ", this lane-tune reads 1 to " +
               std::to_string(kContractVersion));
    } else if (l.name == "DEVICE_BYTES") {
      l.expect(1);
      out.device_bytes = l.count(0);
    } else if (l.name == "HOST_BYTES") {
      l.expect(1);
      out.host_bytes = l.count(0);
    } else if (l.name == "MOVED") {
      l.expect(1);
      out.moved = int(l.count(0));
    } else if (l.name == "TOKENS") {
      PromptResult p;
      for (size_t i = 0; i < l.words.size(); ++i) {
        int64_t t = l.integer(i);
        if (t < 0 || t > INT32_MAX) l.fail("token " + std::string(l.words[i]) + " is out of range");
        p.tokens.push_back(int32_t(t));
      }
      out.prompts.push_back(std::move(p));
    } else if (l.name == "PREFILL_MS") {
      l.expect(1);
      prompt().prefill_ms = l.number_at(0);
    } else if (l.name == "DECODE_MS_PER_TOKEN") {
      l.expect(1);
      prompt().decode_ms_per_token = l.number_at(0);
    } else if (l.name == "DECODE_TOK_PER_S") {
      l.expect(1);
      prompt().decode_tok_per_s = l.number_at(0);
    } else if (l.name == "PROFILE") {
      l.expect(3);
      out.profile.push_back({1, std::string(l.words[0]), std::string(l.words[1]), l.number_at(2)});
    } else if (l.name == "PROFILE_TOTAL_US") {
      l.expect(1);
      out.profile_total_us = l.number_at(0);
    } else if (l.name == "PROFILE_CHUNK") {
      l.expect(4);
      int64_t rows = l.integer(0);
      if (rows < 1) l.fail("a chunk has at least one row");
      out.profile.push_back({int(rows), std::string(l.words[1]), std::string(l.words[2]), l.number_at(3)});
    } else if (l.name == "PROFILE_CHUNK_TOTAL_US") {
      l.expect(2);
      if (l.integer(0) < 1) l.fail("a chunk has at least one row");
      l.number_at(1);
    } else if (l.name == "PROFILE_RUNS") {
      l.expect(2);
      const int64_t rows = l.integer(0), runs = l.integer(1);
      if (rows < 1 || runs < 0) l.fail("a form has at least one row and runs a whole number of times");
      out.profile_runs.push_back({int(rows), int(runs)});
    } else if (l.name == "WORKLOAD") {
      l.expect(6);
      WorkloadRun w;
      if (l.integer(0) != int64_t(out.workload.size()) + 1)
        l.fail("the workload's runs are numbered 1, 2, ... in order");
      w.prompt = int(l.count(1));
      w.gen = int(l.count(2));
      w.prefill_ms = l.number_at(3);
      w.decode_ms_per_token = l.number_at(4);
      w.total_ms = l.number_at(5);
      if (w.prompt < 1 || w.gen < 1) l.fail("a workload has a prompt and generates a token");
      out.workload.push_back(w);
    } else if (l.name == "CUTOFF") {
      l.expect(6);
      if (out.cutoff) l.fail("a run is cut off once");
      Cutoff c;
      c.run.prompt = int(l.count(0));
      c.run.gen = int(l.count(1));
      c.run.prefill_ms = l.number_at(2);
      c.run.decode_ms_per_token = l.number_at(3);
      c.run.total_ms = l.number_at(4);
      c.limit_ms = l.number_at(5);
      if (c.run.prompt < 1 || c.run.gen < 1) l.fail("a workload has a prompt and generates a token");
      out.cutoff = c;
    } else if (l.name == "LOGITS_HASH") {
      l.expect(1);
      if (l.words[0].size() != 16 || l.words[0].find_first_not_of("0123456789abcdef") != std::string_view::npos)
        l.fail("a logits hash is 16 hex digits");
      out.logits_hash = std::string(l.words[0]);
    } else if (l.name == "PHASE_MS") {
      l.expect(2);
      out.phases.push_back({std::string(l.words[0]), l.number_at(1)});
    } else if (l.name == "STAGGER_CHECK") {
      l.expect(2);
      if (l.words[1] != "same" && l.words[1] != "differs") l.fail("a stagger check is `same` or `differs`");
      out.stagger_checks.push_back({l.count(0), l.words[1] == "same"});
    }
  }
  return out;
}

}  // namespace lt::lane
