// The CLI's subcommands: each file adds its own to the app through a static registration.
#pragma once

#include <functional>
#include <utility>

#include <CLI/CLI.hpp>

namespace lt::cli {

// A subcommand: `order` places it in --help; `add` declares it on the app and binds its callback.
struct Command {
  int order;
  std::function<void(CLI::App&)> add;
};

// Registers a subcommand; returns true so that a file can write `static const bool r = add_command({...});`.
bool add_command(Command c);

// lane-tune's exit statuses (the README's table): scripts tell a failed call from an answer they did not want.
enum Exit : int {
  kExitOk = 0,
  kExitFailed = 1,
  kExitUsage = 2,
  kExitNotFound = 3,
  kExitNoConfiguration = 4,
  kExitRegression = 5,
  kExitUnreachable = 6,
};

// What each exit status means, as `lane-tune --help` lists them.
inline constexpr std::pair<Exit, const char*> kExitMeanings[] = {
    {kExitOk, "done"},
    {kExitFailed, "failed: bad input, a failed build, a refused request"},
    {kExitUsage, "the command line is wrong: an unknown flag, a value not accepted"},
    {kExitNotFound, "not found: no such file (a checkpoint), or the coordinator knows no such job or release"},
    {kExitNoConfiguration, "the job has no verified configuration (yet)"},
    {kExitRegression, "nightly found a release slower, wrong or failing"},
    {kExitUnreachable, "the coordinator cannot be reached"},
};

// The exit status a subcommand's callback asks for (0 by default).
int& exit_status();

}  // namespace lt::cli
