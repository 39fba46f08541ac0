// What several subcommands share on their command lines: the coordinator's address and credentials, --format, GPU
// kind names read without regard to case, and checks that turn a bad value into a usage error.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "coordinator/client.hpp"
#include "output/table.hpp"

namespace lt::cli {

// The options every client command takes: where the coordinator is and its token.
struct Remote {
  std::string coordinator = coord::default_coordinator();
  std::string token = coord::default_token();
  std::string tls_ca = coord::default_tls_ca();
  void add(CLI::App* c);
  coord::Client client(double timeout_s = 30) const { return coord::Client(coordinator, token, timeout_s, tls_ca); }
};

// The --format option (table, json, csv, md); with `json_alias`, --json as another way to say --format json.
struct Output {
  Format format = Format::Table;
  void add(CLI::App* c, bool json_alias = true);
  // Prints `t` in the format asked for.
  void print(const Table& t) const;
};

// A CLI11 check that runs one of lane-tune's own parsers on a value (as a transform, the parser may rewrite it): what
// it throws becomes the usage error, so a bad value is refused before anything is uploaded or called, in the words
// the coordinator would use.
CLI::Validator accepted_by(const std::function<void(std::string&)>& parse);

// A GPU kind's canonical name (`H200` is `h200`); throws lt::Error naming the known kinds for another.
std::string canonical_gpu(const std::string& name);
// A comma-separated list of GPU kinds, each made canonical; throws lt::Error naming an unknown or repeated kind, or
// for a list that names none.
std::string canonical_gpus(const std::string& list);
// Checks that read GPU kinds without regard to case and leave the canonical names in the option's value.
CLI::Validator gpu_kind();
CLI::Validator gpu_kinds();

}  // namespace lt::cli
