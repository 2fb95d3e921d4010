#include "tools/firmware/firmware_build.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "runtime/host/process.h"
#include "runtime/host/temp_files.h"

namespace pteron::firmware {
namespace fs = std::filesystem;
namespace {

// Runs `args`; returns its exit status and (when `output` is given) its stdout+stderr, else
// they go to ours. A program that cannot start says why in `output`.
int run(const std::vector<std::string>& args, std::string* output = nullptr) {
  std::string why;
  const int rc = output == nullptr ? host::run_process(args, "", &why)
                                   : host::run_process_captured(args, output, &why);
  if (!why.empty() && output != nullptr) *output += why + "\n";
  return rc;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string last_lines(const std::string& text, size_t n) {
  size_t pos = text.size();
  for (size_t i = 0; i <= n && pos > 0; ++i) pos = text.rfind('\n', pos - 1);
  return text.substr(pos == std::string::npos ? 0 : pos + 1);
}

// key=value lines written by firmware/CMakeLists.txt into the cross build folder.
std::map<std::string, std::string> read_link_info(const std::string& path) {
  std::map<std::string, std::string> info;
  std::istringstream in(host::read_text_file(path));
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) info[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return info;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The kernel entries a selective library defines: {"aten::add.out", ...}.
std::set<std::string> library_kernels(const std::string& archive, const std::string& library) {
  std::string out;
  if (run({"arm-none-eabi-nm", "-g", "--defined-only", archive}, &out) != 0) {
    throw std::runtime_error("cannot list kernels in " + archive + ": " + last_lines(out, 2));
  }
  const std::string prefix = "pteron_kernel:" + library + ":";
  std::set<std::string> names;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find(prefix);
    if (at != std::string::npos) names.insert(line.substr(at + prefix.size()));
  }
  return names;
}

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// An absolute path for an .incbin inside a C string (no quoting needed: refuse odd names).
std::string asm_path(const std::string& path) {
  const std::string p = fs::absolute(path).string();
  if (p.find_first_of("\"\\\n") != std::string::npos)
    throw std::runtime_error(path + ": unsupported file name");
  return p;
}

void step(const BuildOptions& o, int n, const std::string& what) {
  if (!o.quiet) {
    std::printf("[%d/5] %s\n", n, what.c_str());
    std::fflush(stdout);
  }
}

}  // namespace

ElfSizes elf_sizes(const std::string& elf, const std::string& program_region) {
  std::string out;
  if (run({"arm-none-eabi-size", "-A", "-d", elf}, &out) != 0) {
    throw std::runtime_error("cannot read sections of " + elf + ": " + last_lines(out, 2));
  }
  ElfSizes s;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name;
    uint64_t size = 0, addr = 0;
    if (!(words >> name >> size >> addr) || name[0] != '.') continue;
    // Not loaded: debug information and notes.
    if (name.rfind(".debug", 0) == 0 || name == ".comment" || name == ".ARM.attributes") continue;
    s.sections[name] = size;
    // By section, as every board's linker script names them: code and constants (.text, the
    // unwind index), the program image (the section of the program's region), RAM (the rest).
    if (name == ".text" || name.rfind(".ARM.ex", 0) == 0) {
      s.code_flash += size;
    } else if (name == "." + program_region) {
      s.program_flash += size;
    } else if (addr != 0 || size == 0) {
      s.ram += size;
    }
    if (name == ".data") s.code_flash += size;  // its initialiser sits in code flash too
  }
  s.stack = s.sections.count(".stack") ? s.sections[".stack"] : 0;
  return s;
}

BuildResult build_firmware(const FirmwareTarget& t, const BuildOptions& o) {
  if (!t.is_firmware) {
    throw std::runtime_error(t.target.path + ": not a firmware target (no [firmware] table)");
  }
  BuildResult r;
  step(o, 1, "measuring " + o.program + " on the host (arenas, scratch, method memory)");
  r.needs = measure_program(o.program, o.method, t.target.kernels);
  // The only delegate firmware links is the Ethos-U one (emulated driver: the region runs on the
  // TOSA executor on the M55); it is linked only when the program calls it.
  const bool ethos_u = r.needs.delegates > 0;
  for (const std::string& id : r.needs.delegate_ids) {
    if (id != kEthosUBackendId) {
      throw std::runtime_error(o.program + ": delegate '" + id +
                               "' cannot run in firmware (only the Ethos-U delegate, "
                               "--backends ethos-u; or compile without backends)");
    }
  }
  r.estimate = estimate_budget(t, r.needs);
  if (!r.estimate.over.empty())
    throw std::runtime_error(o.program + ": over budget: " + r.estimate.over);

  const std::string& cpu = t.target.cpu_arch;
  step(o, 2, cpu + " libraries in " + o.build_dir + " (built once, then incremental)");
  if (!fs::exists(fs::path(o.build_dir) / "build.ninja")) {
    std::string out;
    if (run({"cmake", "-S", o.source_dir, "-B", o.build_dir, "-G", "Ninja",
             "-DCMAKE_TOOLCHAIN_FILE=" + o.source_dir + "/cmake/arm-none-eabi.cmake",
             "-DPTERON_MCU=" + cpu},
            &out) != 0)
      throw std::runtime_error("cannot configure the cross build in " + o.build_dir + ": " +
                               last_lines(out, 3));
  }
  {
    const std::vector<std::string> build = {"cmake", "--build", o.build_dir, "--target",
                                            "pteron_firmware_libs"};
    std::string out;
    const int rc = o.quiet ? run(build, &out) : run(build);
    if (rc != 0)
      throw std::runtime_error("building the " + cpu + " libraries failed: " + last_lines(out, 3));
  }
  const auto link = read_link_info(o.build_dir + "/firmware_link.txt");
  const std::string built_for = link.count("cpu") ? link.at("cpu") : "cortex-m55";
  if (built_for != cpu || (link.count("machine") && link.at("machine") != t.qemu_machine)) {
    throw std::runtime_error(o.build_dir + " is a " + built_for + " build (" +
                             (link.count("machine") ? link.at("machine") : "?") + "); " +
                             t.target.name + " needs " + cpu + " on " + t.qemu_machine +
                             ": give another cross build folder");
  }
  if (ethos_u && (!link.count("ethos_u_backend") || link.at("ethos_u_backend").empty())) {
    throw std::runtime_error(o.build_dir +
                             ": the Ethos-U delegate is not built for firmware (no tosa.fbs: "
                             "make venv-arm, then reconfigure the cross build)");
  }
  if (ethos_u) {
    const std::vector<std::string> build = {"cmake", "--build", o.build_dir, "--target",
                                            "pteron_firmware_ethos_u"};
    std::string out;
    const int rc = o.quiet ? run(build, &out) : run(build);
    if (rc != 0)
      throw std::runtime_error("building the Ethos-U delegate for the " + cpu +
                               " failed: " + last_lines(out, 3));
  }

  step(o, 3, "selecting kernels (" + std::to_string(r.needs.ops.size()) + " operators)");
  std::vector<std::pair<std::string, std::string>> libraries;  // (library, archive) in target order
  if (o.kernel_path != "simd" && o.kernel_path != "scalar")
    throw std::runtime_error("kernel path must be simd or scalar, not '" + o.kernel_path + "'");
  for (const std::string& name : t.target.kernels) {
    // One file per kernel library: build-m55/firmware_kernels/<library>.txt holds its archive
    // (<library>@scalar.txt its scalar-only build). Targets name libraries as --backends does
    // ("cortex-m"); the runtime's name has an underscore ("cortex_m").
    std::string lib = name;
    std::replace(lib.begin(), lib.end(), '-', '_');
    const fs::path dir = fs::path(o.build_dir) / "firmware_kernels";
    fs::path offered = dir / (lib + ".txt");
    if (o.kernel_path == "scalar" && fs::exists(dir / (lib + "@scalar.txt")))
      offered = dir / (lib + "@scalar.txt");
    if (fs::exists(offered)) libraries.emplace_back(lib, host::read_text_file(offered.string()));
  }
  if (libraries.empty()) {
    throw std::runtime_error(o.build_dir +
                             ": none of the target's kernel libraries is built for firmware");
  }
  std::map<std::string, std::set<std::string>> available;
  for (const auto& [lib, archive] : libraries) available[lib] = library_kernels(archive, lib);
  std::vector<std::string> ops = r.needs.ops;
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  std::vector<std::string> missing;
  for (const std::string& op : ops) {
    std::string chosen;
    for (const auto& [lib, archive] : libraries) {
      if (available[lib].count(op)) {
        chosen = lib;
        break;
      }
    }
    if (chosen.empty())
      missing.push_back(op);
    else
      r.kernels.push_back(chosen + ":" + op);
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw std::runtime_error(o.program + ": no " + cpu + " kernel for " + list);
  }

  step(o, 4,
       "generating sources (program in flash, " + std::to_string(r.needs.arenas.size()) +
           " arena(s) in their regions, " + std::to_string(r.kernels.size()) + " kernels)");
  const fs::path work = fs::path(o.output).concat(".build");
  fs::create_directories(work);
  std::ostringstream cfg;
  cfg << "// Generated by `pteron firmware` for " << o.program << "; do not edit.\n"
      << "#include \"firmware/app/firmware_config.h\"\n\n"
      << "// The program image, as a constant array in the target's program flash ("
      << t.program_region << ").\n"
      << "extern \"C\" const uint8_t pteron_program[];\n"
      << "__asm__(\".section ." << t.program_region
      << ".pteron_program,\\\"a\\\"\\n.balign 64\\n.global "
         "pteron_program\\n\"\n"
      << "        \"pteron_program:\\n.incbin \\\"" << asm_path(o.program) << "\\\"\\n\"\n"
      << "        \".previous\\n\");\n";
  cfg << "\nnamespace {\n";
  std::string spans = "    {},\n";
  for (size_t i = 0; i < r.needs.arenas.size(); ++i) {
    const uint64_t size = r.needs.arenas[i];
    if (size == 0) {
      spans += "    {},\n";
      continue;
    }
    const std::string region = t.target.memory[i].name;
    cfg << "// Arena " << i + 1 << " (" << size << " bytes), placed in " << region
        << " by the memory plan.\n"
        << "alignas(16) uint8_t arena" << i + 1 << "[" << size << "] __attribute__((section(\"."
        << region << ".pteron_arena" << i + 1 << "\")));\n";
    spans += "    {arena" + std::to_string(i + 1) + ", " + std::to_string(size) + "},\n";
  }
  const uint64_t method_bytes =
      std::max<uint64_t>(o.method_bytes ? o.method_bytes : r.needs.method_bytes, 16);
  const uint64_t stack_size = o.stack_size ? o.stack_size : t.stack_size;
  const uint64_t scratch_bytes = std::max<uint64_t>(r.needs.scratch_bytes, 16);
  // Method memory and scratch go to the first RAM region with room left after its arenas (and,
  // for the first region, the stack and static data).
  std::map<std::string, uint64_t> used;
  for (size_t i = 0; i < r.needs.arenas.size() && i < t.target.memory.size(); ++i) {
    used[t.target.memory[i].name] += r.needs.arenas[i];
  }
  if (!t.ram_regions.empty()) used[t.ram_regions[0].first] += stack_size + kRuntimeStateBytes;
  auto place = [&](uint64_t bytes, const char* what) {
    for (const auto& [name, size] : t.ram_regions) {
      if (used[name] + bytes <= size) {
        used[name] += bytes;
        return name;
      }
    }
    if (t.ram_regions.empty())
      return t.target.memory.empty() ? std::string("dtcm") : t.target.memory[0].name;
    throw std::runtime_error(o.program + ": no RAM region has room for the " + what + " (" +
                             std::to_string(bytes) + " bytes)");
  };
  const std::string method_region = place(method_bytes, "method memory");
  const std::string scratch_region = place(scratch_bytes, "scratch");
  cfg << "alignas(16) uint8_t method_memory[" << method_bytes << "] __attribute__((section(\"."
      << method_region << ".pteron_method\")));\n"
      << "alignas(16) uint8_t scratch[" << scratch_bytes << "] __attribute__((section(\"."
      << scratch_region << ".pteron_scratch\")));\n"
      << "pteron::Span<uint8_t> arenas[] = {\n"
      << spans << "};\n\n"
      << "// Only the kernels this program calls (selective build).\n";
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    const std::string& k = r.kernels[i];
    const size_t colon = k.find(':');
    cfg << "extern const pteron::KernelEntry kernel" << i << " __asm__(PTERON_KERNEL_SYMBOL("
        << c_string(k.substr(0, colon)) << ", " << c_string(k.substr(colon + 1)) << "));\n";
  }
  // The kernel registry's table, with room for exactly these kernels (the runtime's weak default
  // holds 256: 3 KiB of RAM).
  const size_t slots = std::max<size_t>(r.kernels.size(), 1);
  cfg << "}  // namespace\n"
      << "extern \"C\" {\n"
      << "pteron::KernelEntry pteron_kernel_slots[" << slots << "];\n"
      << "extern const size_t pteron_kernel_slot_count = " << slots << ";\n"
      << "}\n"
      << "namespace {\n";
  cfg << "const pteron::KernelEntry* const kernels[] = {\n";
  for (size_t i = 0; i < r.kernels.size(); ++i) cfg << "    &kernel" << i << ",\n";
  if (r.kernels.empty()) cfg << "    nullptr,\n";
  cfg << "};\n";
  const bool baked = !o.baked_inputs.empty();
  uint64_t baked_size = 0;
  if (baked) {
    baked_size = fs::file_size(o.baked_inputs);
    cfg << "extern \"C\" const uint8_t pteron_inputs[];\n"
        << "__asm__(\".section ." << t.program_region
        << ".pteron_inputs,\\\"a\\\"\\n.balign 16\\n.global "
           "pteron_inputs\\n\"\n"
        << "        \"pteron_inputs:\\n.incbin \\\"" << asm_path(o.baked_inputs) << "\\\"\\n\"\n"
        << "        \".previous\\n\");\n";
  }
  cfg << "}  // namespace\n\n"
      << "namespace pteron::firmware {\n"
      << "const FirmwareConfig config = {\n"
      << "    pteron_program, " << r.needs.program_bytes << ", " << c_string(o.method) << ",\n"
      << "    arenas, " << r.needs.arenas.size() + 1 << ",\n"
      << "    method_memory, " << method_bytes << ",\n"
      << "    scratch, " << scratch_bytes << ",\n"
      << "    kernels, " << r.kernels.size() << ",\n"
      << "    " << (baked ? "pteron_inputs" : "nullptr") << ", " << baked_size << ",\n"
      << "};\n}  // namespace pteron::firmware\n";
  write_text((work / "firmware_config.cpp").string(), cfg.str());

  std::string ld = host::read_text_file(link.at("linker_script"));
  auto replace = [&](const std::string& key, const std::string& value) {
    for (size_t at; (at = ld.find(key)) != std::string::npos;) ld.replace(at, key.size(), value);
  };
  replace("@STACK_SIZE@", std::to_string(stack_size));
  replace("@HEAP_SIZE@", std::to_string(o.heap_size));
  write_text((work / "app.ld").string(), ld);

  step(o, 5, "compiling and linking " + o.output);
  // The CPU flags CMake wrote, one word each (-mcpu=cortex-m55 -mfloat-abi=hard ...).
  std::vector<std::string> flags;
  for (const std::string& flag : split(link.count("flags") ? link.at("flags") : "", ' '))
    if (!flag.empty()) flags.push_back(flag);
  const std::string obj = (work / "firmware_config.o").string();
  std::vector<std::string> compile = {"arm-none-eabi-g++"};
  compile.insert(compile.end(), flags.begin(), flags.end());
  for (const char* flag : {"-std=c++17", "-Os", "-fno-exceptions", "-fno-rtti",
                           "-DPTERON_BARE_METAL", "-DPTERON_SELECTIVE_BUILD"})
    compile.push_back(flag);
  for (const std::string& dir : split(link.at("include"), ';')) compile.push_back("-I" + dir);
  for (const std::string& arg :
       {std::string("-c"), (work / "firmware_config.cpp").string(), std::string("-o"), obj})
    compile.push_back(arg);
  std::string out;
  if (run(compile, &out) != 0) {
    throw std::runtime_error("compiling the generated firmware sources failed: " +
                             last_lines(out, 4));
  }
  std::vector<std::string> archives;
  if (ethos_u) {
    // The backend's object registers it at start-up; its libraries follow in the group.
    for (const std::string& obj : split(link.at("ethos_u_backend"), ';')) archives.push_back(obj);
    archives.push_back(link.at("app"));
    archives.push_back(link.at("ethos_u_runtime"));
    archives.push_back(link.at("tosa_runtime"));
  } else {
    archives.push_back(link.at("app"));
  }
  for (const auto& [lib, archive] : libraries) archives.push_back(archive);
  archives.push_back(link.at("runtime"));
  archives.push_back(link.at("platform"));
  std::vector<std::string> link_args = {"arm-none-eabi-g++"};
  link_args.insert(link_args.end(), flags.begin(), flags.end());
  for (const std::string& arg :
       {"-T" + (work / "app.ld").string(), std::string("-nostartfiles"),
        std::string("--specs=nano.specs"), std::string("--specs=rdimon.specs"),
        std::string("-Wl,--gc-sections"), std::string("-Wl,--undefined=board_vectors"),
        "-Wl,-Map=" + (work / "app.map").string(), obj, std::string("-Wl,--start-group")})
    link_args.push_back(arg);
  link_args.insert(link_args.end(), archives.begin(), archives.end());
  for (const std::string& arg : {std::string("-Wl,--end-group"), std::string("-o"), o.output})
    link_args.push_back(arg);
  out.clear();
  if (run(link_args, &out) != 0) {
    throw std::runtime_error("linking " + o.output + " failed: " + last_lines(out, 4));
  }
  r.sizes = elf_sizes(o.output, t.program_region);
  return r;
}

RunResult run_firmware(const std::string& elf, const std::string& machine,
                       const std::string& inputs, const std::string& outputs,
                       const std::string& icount_plugin, int timeout_seconds) {
  RunResult r;
  std::vector<std::string> command = {"timeout",
                                      std::to_string(timeout_seconds),
                                      "qemu-system-arm",
                                      "-M",
                                      machine,
                                      "-nographic",
                                      "-semihosting",
                                      "-kernel",
                                      elf};
  const std::string args = (inputs.empty() ? std::string("-") : fs::absolute(inputs).string()) +
                           (outputs.empty() ? "" : " " + fs::absolute(outputs).string());
  if (args.find(' ') != args.rfind(' ') || args.find('\'') != std::string::npos) {
    // Words are split on spaces on the device.
    if (std::count(args.begin(), args.end(), ' ') > 1)
      throw std::runtime_error("file paths must not contain spaces");
  }
  command.push_back("-append");
  command.push_back(args);
  std::string log;
  if (!icount_plugin.empty()) {
    std::string nm;
    if (run({"arm-none-eabi-nm", elf}, &nm) != 0)
      throw std::runtime_error("cannot read symbols of " + elf);
    std::string begin, end;
    std::istringstream in(nm);
    for (std::string line; std::getline(in, line);) {
      std::istringstream w(line);
      std::string addr, kind, name;
      w >> addr >> kind >> name;
      if (name == "board_icount_begin") begin = addr;
      if (name == "board_icount_end") end = addr;
    }
    if (begin.empty() || end.empty())
      throw std::runtime_error(elf + ": has no instruction-count markers");
    log = elf + ".icount.log";
    for (const std::string& arg :
         {std::string("-plugin"), icount_plugin + ",begin=0x" + begin + ",end=0x" + end,
          std::string("-d"), std::string("plugin"), std::string("-D"), log})
      command.push_back(arg);
  }
  r.exit_code = run(command, &r.console);
  std::istringstream in(r.console);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("pteron-firmware: ok", 0) != 0) continue;
    std::istringstream words(line.substr(19));
    for (std::string kv; words >> kv;) {
      const size_t eq = kv.find('=');
      if (eq != std::string::npos) r.report[kv.substr(0, eq)] = std::stoull(kv.substr(eq + 1));
    }
  }
  if (!log.empty()) {
    const std::string text = host::read_text_file(log);
    const size_t at = text.find("icount: inference=");
    if (at != std::string::npos) {
      r.instructions = std::stoull(text.substr(at + 18));
      r.counted = true;
    }
  }
  return r;
}

}  // namespace pteron::firmware
