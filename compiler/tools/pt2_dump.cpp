// pt2_dump FILE.pt2 [--model NAME]: prints the graph pteron reads from a torch.export archive.
// Exit codes follow the CLI contract: 0 success, 1 bad input (one line on stderr), 2 usage.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "compiler/compile_error.h"
#include "compiler/frontend/pt2_loader.h"

int main(int argc, char** argv) {
  using pteron::compiler::CompileError;
  pteron::compiler::frontend::LoadOptions options;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
      options.model_name = argv[++i];
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "usage: pt2_dump FILE.pt2 [--model NAME]\n"
          "Prints the graph of a torch.export.save archive as pteron reads it.\n");
      return 0;
    } else if (path == nullptr) {
      path = argv[i];
    } else {
      std::fprintf(stderr, "pt2_dump: unexpected argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (path == nullptr) {
    std::fprintf(stderr, "usage: pt2_dump FILE.pt2 [--model NAME]\n");
    return 2;
  }
  try {
    const auto graph = pteron::compiler::frontend::load_pt2(path, options);
    for (const auto& [key, value] : graph.metadata()) {
      std::printf("# %s: %s\n", key.c_str(), value.c_str());
    }
    std::fputs(graph.to_string().c_str(), stdout);
    return 0;
  } catch (const CompileError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (const std::exception& e) {
    // Anything else is a pteron bug, but still a one-line message and no crash.
    std::fprintf(stderr, "error: %s: internal error: %s\n", path, e.what());
  }
  return 1;
}
