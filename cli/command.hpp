// The CLI's subcommands: each file adds its own to the app through a static registration.
#pragma once

#include <functional>

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
  kExitFailed = 1,          // an error: bad input, a failed build, a refused request
  kExitUsage = 2,           // the command line is wrong
  kExitNotFound = 3,        // the coordinator knows no job or release of that number
  kExitNoConfiguration = 4, // the job has no verified configuration (yet)
  kExitRegression = 5,      // nightly: a release is slower or wrong
  kExitUnreachable = 6,     // the coordinator cannot be reached
};

// The exit status a subcommand's callback asks for (0 by default).
int& exit_status();

}  // namespace lt::cli
