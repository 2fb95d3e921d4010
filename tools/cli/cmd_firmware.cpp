// pteron firmware PROGRAM.pte --target T -o app.elf [--run [--inputs in.npz | --random-inputs]
//                 [--outputs out.npz]] [--bake-inputs in.npz] [--json]
// Builds Cortex-M firmware for a program (tools/firmware) and optionally runs it under QEMU on the
// target's board, counting the inference's instructions and comparing estimated and measured
// memory.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "runtime/host/self_location.h"
#include "tools/cli/commands.h"
#include "tools/cli/npz.h"
#include "tools/firmware/firmware_build.h"

namespace pteron::cli {
namespace {
namespace fs = std::filesystem;
using firmware::TensorSpec;

struct FirmwareCliOptions {
  std::string program;
  std::string target = "cortex-m55-an547";
  std::string output;
  std::string method = "forward";
  std::string cross_build;
  std::string bake_inputs;
  bool run = false;
  std::string inputs;
  std::string outputs;
  bool random_inputs = false;
  uint64_t seed = 0;
  bool json = false;
  std::string kernel_path = "simd";
  bool trim = false;
};

std::string kib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  return buf;
}

// The method's inputs as raw bytes back to back (the firmware's input file format).
std::vector<uint8_t> raw_inputs(const FirmwareCliOptions& o, const std::vector<TensorSpec>& specs) {
  std::vector<uint8_t> raw;
  if (!o.inputs.empty()) {
    std::vector<NpyArray> file = read_npz(o.inputs);
    for (size_t i = 0; i < specs.size(); ++i) {
      const std::string name = "input_" + std::to_string(i);
      const NpyArray* a = nullptr;
      for (const NpyArray& f : file) {
        if (f.name == name) a = &f;
      }
      if (a == nullptr && file.size() == specs.size()) a = &file[i];
      if (a == nullptr) throw UserError(o.inputs + ": has no array '" + name + "'");
      if (a->dtype != specs[i].dtype || a->shape != specs[i].shape) {
        throw UserError(o.inputs + ": '" + name + "' does not match the program's input " +
                        std::to_string(i) + " (dtype or shape)");
      }
      raw.insert(raw.end(), a->data.begin(), a->data.end());
    }
    return raw;
  }
  if (!o.random_inputs && !specs.empty()) {
    throw UserError(o.program + ": pass --inputs FILE.npz or --random-inputs to run the firmware");
  }
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<float> normal;
  for (const TensorSpec& s : specs) {
    const size_t start = raw.size();
    raw.resize(start + s.nbytes);
    if (s.dtype == ScalarType::Float) {
      for (size_t k = 0; k + 4 <= s.nbytes; k += 4) {
        const float v = normal(rng);
        std::memcpy(&raw[start + k], &v, 4);
      }
    } else {
      for (size_t k = 0; k < s.nbytes; ++k) raw[start + k] = static_cast<uint8_t>(rng() % 7);
    }
  }
  return raw;
}

std::vector<NpyArray> outputs_from_raw(const std::string& path,
                                       const std::vector<TensorSpec>& specs) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<NpyArray> arrays;
  size_t offset = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    for (size_t d = 0; d < s.dim_order.size(); ++d) {
      if (s.dim_order[d] != d)
        throw UserError("output " + std::to_string(i) + " has a non-default dim order");
    }
    if (offset + s.nbytes > raw.size())
      throw UserError(path + ": the firmware wrote fewer output bytes than expected");
    NpyArray a;
    a.name = "output_" + std::to_string(i);
    a.dtype = s.dtype;
    a.shape = s.shape;
    a.data.assign(raw.begin() + static_cast<long>(offset),
                  raw.begin() + static_cast<long>(offset + s.nbytes));
    offset += s.nbytes;
    arrays.push_back(std::move(a));
  }
  return arrays;
}

// The source tree the cross build is configured from: $PTERON_SOURCE_DIR, else the checkout the
// running pteron was built in (found above the binary). A wheel or `cmake --install` carries no
// sources: firmware is then built from a checkout, or against the installed bare-metal package.
std::string firmware_source_dir() {
  std::string dir = host::env_or_empty("PTERON_SOURCE_DIR");
  const char* marker = "firmware/app/firmware_main.cpp";
  if (!dir.empty()) {
    if (!fs::exists(fs::path(dir) / marker))
      throw UserError("PTERON_SOURCE_DIR=" + dir + " is not a pteron checkout (no " + marker + ")");
    return dir;
  }
  std::string looked;
  const std::string found = host::find_near_self({marker}, &looked);
  if (found.empty()) {
    throw UserError("the pteron source tree firmware is built from was not found (looked for " +
                    looked + "); set PTERON_SOURCE_DIR to a pteron checkout");
  }
  return found.substr(0, found.size() - std::string(marker).size() - 1);
}

// The QEMU instruction-count plugin: $PTERON_ICOUNT_PLUGIN, else installed beside pteron
// (<prefix>/lib/pteron) or in the build tree (build/tools/qemu_icount).
std::string icount_plugin() {
  std::string plugin = host::env_or_empty("PTERON_ICOUNT_PLUGIN");
  if (!plugin.empty()) return plugin;
  std::string looked;
  plugin = host::find_near_self(
      {"lib/pteron/libqemu_icount.so", "tools/qemu_icount/libqemu_icount.so"}, &looked);
  if (plugin.empty()) {
    throw UserError("the QEMU instruction-count plugin was not found (looked for " + looked +
                    "; set PTERON_ICOUNT_PLUGIN)");
  }
  return plugin;
}

void run(const FirmwareCliOptions& o) {
  firmware::FirmwareTarget target;
  try {
    target = firmware::load_firmware_target(o.target);
  } catch (const std::exception& e) {
    throw UserError(e.what());
  }
  firmware::BuildOptions b;
  b.program = o.program;
  b.method = o.method;
  b.output = o.output;
  b.source_dir = firmware_source_dir();
  // One cross build folder per core: --cross-build, else $PTERON_CROSS_BUILD, else the
  // checkout's build-m55 / build-m7 / build-m4 for the target's core.
  b.build_dir = !o.cross_build.empty() ? o.cross_build
                : std::getenv("PTERON_CROSS_BUILD")
                    ? std::getenv("PTERON_CROSS_BUILD")
                    : b.source_dir + "/" + firmware::default_cross_build_name(target);
  b.quiet = o.json;
  b.kernel_path = o.kernel_path;
  std::vector<uint8_t> baked;
  firmware::BuildResult built;
  try {
    if (!o.bake_inputs.empty()) {
      const firmware::ProgramNeeds needs =
          firmware::measure_program(o.program, o.method, target.target.kernels);
      FirmwareCliOptions with_inputs = o;
      with_inputs.inputs = o.bake_inputs;
      baked = raw_inputs(with_inputs, needs.inputs);
      b.baked_inputs = o.output + ".inputs.bin";
      std::ofstream(b.baked_inputs, std::ios::binary)
          .write(reinterpret_cast<const char*>(baked.data()),
                 static_cast<std::streamsize>(baked.size()));
    }
    if (o.trim) {
      // A first build and run measures what the device really uses; the image is then rebuilt
      // reserving that: method memory as used on the 32-bit device (the host's measurement has
      // 64-bit pointers) and the stack high-water mark plus a margin (a quarter and 1 KiB).
      if (!o.run) throw UserError("--trim needs --run (it measures a first run on the device)");
      firmware::BuildOptions first = b;
      first.quiet = true;
      const firmware::BuildResult probe = firmware::build_firmware(target, first);
      std::string probe_inputs;
      if (baked.empty()) {
        probe_inputs = o.output + ".in.bin";
        const std::vector<uint8_t> raw = raw_inputs(o, probe.needs.inputs);
        std::ofstream(probe_inputs, std::ios::binary)
            .write(reinterpret_cast<const char*>(raw.data()),
                   static_cast<std::streamsize>(raw.size()));
      }
      const firmware::RunResult measured =
          firmware::run_firmware(o.output, target.qemu_machine, probe_inputs, "", "");
      if (measured.exit_code != 0 || !measured.report.count("method") ||
          !measured.report.count("stack")) {
        throw UserError(o.output + ": the first run for --trim failed (exit " +
                        std::to_string(measured.exit_code) + ")");
      }
      b.method_bytes = measured.report.at("method");
      const uint64_t stack = measured.report.at("stack");
      b.stack_size = (stack + stack / 4 + 1024 + 255) / 256 * 256;
      // newlib's heap as the run used it (its stdio state; pteron itself never allocates)
      // instead of a fixed 1 KiB.
      if (measured.report.count("heap")) b.heap_size = (measured.report.at("heap") + 7) / 8 * 8;
    }
    built = firmware::build_firmware(target, b);
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    throw UserError(e.what());
  }
  const firmware::BudgetEstimate& est = built.estimate;
  const firmware::ElfSizes& elf = built.sizes;
  nlohmann::json j;
  j["program"] = o.program;
  j["elf"] = o.output;
  j["target"] = target.target.name;
  j["kernels"] = built.kernels;
  // Delegates linked in (the Ethos-U one, emulated) and the load-time bytes they declare.
  j["delegates"] = {{"ids", built.needs.delegate_ids},
                    {"method_bytes", built.needs.delegate_method_bytes}};
  j["estimate"] = {{"ram", est.ram()},     {"arenas", est.arenas},   {"scratch", est.scratch},
                   {"method", est.method}, {"stack", est.stack},     {"state", est.state},
                   {"code", est.code},     {"program", est.program}, {"flash", est.flash()}};
  j["elf_sizes"] = {{"code_flash", elf.code_flash},
                    {"program_flash", elf.program_flash},
                    {"flash", elf.flash()},
                    {"ram_reserved", elf.ram},
                    {"sections", elf.sections}};
  if (!o.json) {
    std::printf("%s: %zu kernels; flash %s (code %s, program %s); RAM reserved %s (stack %s)\n",
                o.output.c_str(), built.kernels.size(), kib(elf.flash()).c_str(),
                kib(elf.code_flash).c_str(), kib(elf.program_flash).c_str(), kib(elf.ram).c_str(),
                kib(elf.stack).c_str());
    std::printf("  estimate before linking: %s\n", firmware::describe_budget(target, est).c_str());
  }

  if (o.run) {
    const std::string in_path = o.output + ".in.bin";
    const std::string out_path = o.output + ".out.bin";
    fs::remove(out_path);
    std::vector<uint8_t> raw;
    if (baked.empty()) {
      raw = raw_inputs(o, built.needs.inputs);
      std::ofstream(in_path, std::ios::binary)
          .write(reinterpret_cast<const char*>(raw.data()),
                 static_cast<std::streamsize>(raw.size()));
    }
    if (!o.json) {
      std::printf("running under qemu-system-arm -M %s ...\n", target.qemu_machine.c_str());
      std::fflush(stdout);
    }
    firmware::RunResult r;
    try {
      r = firmware::run_firmware(o.output, target.qemu_machine, baked.empty() ? in_path : "",
                                 out_path, icount_plugin());
    } catch (const std::exception& e) {
      throw UserError(e.what());
    }
    if (r.exit_code != 0 || r.report.empty()) {
      std::string console = r.console;
      while (!console.empty() && console.back() == '\n') console.pop_back();
      const size_t nl = console.rfind('\n');
      throw UserError(o.output + ": firmware failed (exit " + std::to_string(r.exit_code) +
                      "): " + (nl == std::string::npos ? console : console.substr(nl + 1)));
    }
    std::vector<NpyArray> outputs = outputs_from_raw(out_path, built.needs.outputs);
    if (!o.outputs.empty()) write_npz(o.outputs, outputs);
    const uint64_t state = elf.sections.count(".data") ? elf.sections.at(".data") : 0;
    const uint64_t bss = elf.sections.count(".bss") ? elf.sections.at(".bss") : 0;
    const uint64_t measured = r.report["arenas"] + r.report["method"] + r.report["scratch"] +
                              r.report["stack"] + state + bss + r.report["heap"];
    j["measured"] = {{"ram", measured},
                     {"stack_high_water", r.report["stack"]},
                     {"method", r.report["method"]},
                     {"scratch", r.report["scratch"]},
                     {"arenas", r.report["arenas"]},
                     {"heap", r.report["heap"]},
                     {"state", state + bss}};
    if (r.counted) j["measured"]["instructions"] = r.instructions;
    if (o.json) {
      std::printf("%s\n", j.dump(2).c_str());
      return;
    }
    std::printf(
        "  measured on the device: RAM %s (arenas %s, scratch %s, method %s, stack high water %s "
        "of %s, runtime state %s)\n",
        kib(measured).c_str(), kib(r.report["arenas"]).c_str(), kib(r.report["scratch"]).c_str(),
        kib(r.report["method"]).c_str(), kib(r.report["stack"]).c_str(),
        kib(r.report["stack_reserved"]).c_str(), kib(state + bss).c_str());
    std::printf("  estimate vs measured: RAM %s vs %s, code %s vs %s\n", kib(est.ram()).c_str(),
                kib(measured).c_str(), kib(est.code).c_str(), kib(elf.code_flash).c_str());
    if (r.counted)
      std::printf("  instructions per inference: %llu\n",
                  static_cast<unsigned long long>(r.instructions));
    if (!o.outputs.empty()) std::printf("  outputs written to %s\n", o.outputs.c_str());
    return;
  }
  if (o.json) std::printf("%s\n", j.dump(2).c_str());
}

}  // namespace

void add_firmware_command(CLI::App& app) {
  auto opts = std::make_shared<FirmwareCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "firmware", "Build bare-metal firmware for a program and run it under QEMU");
  cmd->add_option("program", opts->program, "program file (.pte), compiled for the target")
      ->required();
  cmd->add_option("--target", opts->target, "firmware target (targets/NAME.toml) or file")
      ->capture_default_str();
  cmd->add_option("-o,--output", opts->output, "firmware ELF to write")->required();
  cmd->add_option("--method", opts->method, "method to run")->capture_default_str();
  cmd->add_option("--cross-build", opts->cross_build,
                  "cross build folder for the target core's libraries (default build-m55, "
                  "build-m7 or build-m4 in the checkout)");
  cmd->add_option("--bake-inputs", opts->bake_inputs, "build these inputs (.npz) into the image");
  cmd->add_flag("--run", opts->run, "run the firmware under qemu-system-arm (the target's board)");
  cmd->add_option("--inputs", opts->inputs, "inputs for --run as .npz (input_0, ...)");
  cmd->add_option("--outputs", opts->outputs, "write the firmware's outputs to this .npz");
  cmd->add_flag("--random-inputs", opts->random_inputs, "run with seeded random inputs");
  cmd->add_option("--seed", opts->seed, "seed for --random-inputs")->capture_default_str();
  cmd->add_flag("--json", opts->json, "machine-readable report");
  cmd->add_flag("--trim", opts->trim,
                "with --run: reserve only the method memory and stack (plus a margin) that a first "
                "run on the device used, then build and run again");
  cmd->add_option("--kernel-path", opts->kernel_path,
                  "simd, or scalar: link the int8 kernels without their MVE or DSP paths "
                  "(comparison)")
      ->check(CLI::IsMember({"simd", "scalar"}))
      ->capture_default_str();
  cmd->callback([opts] { run(*opts); });
}

}  // namespace pteron::cli
