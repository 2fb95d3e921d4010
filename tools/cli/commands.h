// The `pteron` subcommands. Each registers itself on the CLI11 app and runs when chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>

namespace pteron::cli {

// A user error: printed as one line on stderr, exit code 1.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void add_compile_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_firmware_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_debug_command(CLI::App& app);
void add_explore_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_tune_command(CLI::App& app);

}  // namespace pteron::cli
