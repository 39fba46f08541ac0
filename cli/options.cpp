// The subcommands' shared options: coordinator, --format, GPU kinds.
#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <sstream>

#include "compiler/error.hpp"
#include "coordinator/space.hpp"

namespace lt::cli {

void Remote::add(CLI::App* c) {
  c->add_option("--coordinator", coordinator, "host:port (default $LT_COORDINATOR or 127.0.0.1:7117)");
  c->add_option("--token", token, "The coordinator's token (default $LT_TOKEN)");
  c->add_option("--tls-ca", tls_ca, "Check a TLS coordinator against this CA certificate (default $LT_TLS_CA)");
}

void Output::add(CLI::App* c, bool json_alias) {
  auto* f = c->add_option_function<std::string>(
                 "--format", [this](const std::string& v) { format = parse_format(v); },
                 std::string("How to print: ") + kFormatNames + " (default table)")
                ->check(accepted_by([](std::string& v) { parse_format(v); }));
  if (json_alias)
    c->add_flag_callback(
         "--json", [this] { format = Format::Json; }, "The same as --format json")
        ->excludes(f);
}

void Output::print(const Table& t) const {
  const std::string text = render(t, format);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

CLI::Validator accepted_by(const std::function<void(std::string&)>& parse) {
  return CLI::Validator(
      [parse](std::string& value) -> std::string {
        try {
          parse(value);
        } catch (const lt::Error& e) {
          return e.what();
        }
        return {};
      },
      "");
}

std::string canonical_gpu(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const coord::GpuKind* kind = coord::find_gpu_kind(lower);
  if (!kind) {
    std::string known;
    for (const auto& n : coord::gpu_kind_names()) known += (known.empty() ? "" : ", ") + n;
    throw lt::Error("unknown GPU kind '" + name + "' (" + known + ")");
  }
  return kind->name;
}

std::string canonical_gpus(const std::string& list) {
  std::string out;
  std::set<std::string> seen;
  std::stringstream in(list);
  for (std::string g; std::getline(in, g, ',');) {
    if (g.empty()) continue;
    const std::string name = canonical_gpu(g);
    if (!seen.insert(name).second) throw lt::Error("GPU kind '" + g + "' named twice");
    out += (out.empty() ? "" : ",") + name;
  }
  if (out.empty()) throw lt::Error("no GPU kind named (" + list + ")");
  return out;
}

CLI::Validator gpu_kind() {
  return accepted_by([](std::string& v) { v = canonical_gpu(v); });
}

CLI::Validator gpu_kinds() {
  return accepted_by([](std::string& v) { v = canonical_gpus(v); });
}

}  // namespace lt::cli
