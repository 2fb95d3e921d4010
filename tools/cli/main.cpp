// pteron: compile, run and inspect programs. Exit codes: 0 success, 1 user error (with one
// line on stderr naming what is wrong), 2 usage error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "compiler/version.h"
#include "tools/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"pteron: PyTorch programs on Arm devices"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(pteron::compiler::pteron_version()));
  pteron::cli::add_compile_command(app);
  pteron::cli::add_run_command(app);
  pteron::cli::add_inspect_command(app);
  pteron::cli::add_profile_command(app);
  pteron::cli::add_firmware_command(app);
  pteron::cli::add_bench_command(app);
  pteron::cli::add_debug_command(app);
  pteron::cli::add_explore_command(app);
  pteron::cli::add_generate_command(app);
  pteron::cli::add_tune_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pteron: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
