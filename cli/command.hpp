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

// The exit status a subcommand's callback asks for (0 by default).
int& exit_status();

}  // namespace lt::cli
