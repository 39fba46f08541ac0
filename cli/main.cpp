// lane-tune's entry point: the app, every registered subcommand, and errors turned into messages and exit codes.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/version.hpp"
#include "coordinator/client.hpp"

namespace lt::cli {
namespace {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace

bool add_command(Command c) {
  registry().push_back(std::move(c));
  return true;
}

int& exit_status() {
  static int status = 0;
  return status;
}

}  // namespace lt::cli

int main(int argc, char** argv) {
  CLI::App app{"lane-tune: compile a GGUF checkpoint into one fast CUDA program, and tune it for every GPU kind"};
  app.set_version_flag("--version", std::string("lane-tune ") + lt::version());
  app.require_subcommand(1);
  std::string footer = "Exit statuses:";
  for (const auto& [status, meaning] : lt::cli::kExitMeanings)
    footer += "\n  " + std::to_string(status) + "  " + meaning;
  app.footer(footer);
  auto commands = lt::cli::registry();
  std::stable_sort(commands.begin(), commands.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& c : commands) c.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int shown = app.exit(e);  // prints --help, --version or the usage error
    return shown == 0 ? lt::cli::kExitOk : lt::cli::kExitUsage;
  } catch (const lt::coord::CallError& e) {
    std::fprintf(stderr, "lane-tune: %s\n", e.what());
    return e.code() == "UNAVAILABLE" ? lt::cli::kExitUnreachable
           : e.code() == "NOT_FOUND" ? lt::cli::kExitNotFound
                                     : lt::cli::kExitFailed;
  } catch (const lt::NotFound& e) {
    std::fprintf(stderr, "lane-tune: %s\n", e.what());
    return lt::cli::kExitNotFound;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lane-tune: %s\n", e.what());
    return lt::cli::kExitFailed;
  }
  return lt::cli::exit_status();
}
