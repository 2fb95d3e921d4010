// pteron explore PROGRAM.pte [--trace T.etdp] -o program.html: one standalone HTML file (no
// server, no network) that draws the program graph with delegate regions, node details, a
// timing overlay from an ETDump, and the memory plan as tensor lifetimes against arena offsets.
#include <cstdio>
#include <fstream>
#include <string>

#include "tools/cli/commands.h"
#include "tools/cli/explorer_data.h"
#include "tools/cli/program_tools.h"

namespace pteron::cli {

// The page's stylesheet and script (tools/cli/explorer/), embedded at build time.
extern const char* const kExplorerCss;
extern const char* const kExplorerJs;

namespace {

struct ExploreOptions {
  std::string program;
  std::string trace;
  std::string output;
};

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON inside <script>: "</" would end the element, so it is written "<\/" (same JSON string).
std::string script_safe_json(const nlohmann::json& j) {
  const std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') out += '\\';
  }
  return out;
}

std::string page(const nlohmann::json& data) {
  const std::string title = "pteron explore: " + data["file"].get<std::string>();
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>";
  html += html_escape(title);
  html += "</title>\n<style>\n";
  html += kExplorerCss;
  html += "</style></head>\n<body>\n<script type=\"application/json\" id=\"program-data\">";
  html += script_safe_json(data);
  html += "</script>\n<script>\n";
  html += kExplorerJs;
  html += "</script>\n</body></html>\n";
  return html;
}

void explore(const ExploreOptions& o) {
  auto program = open_program(o.program);
  const nlohmann::json data = explorer_data(*program, o.program, o.trace);
  const std::string html = page(data);
  std::ofstream f(o.output, std::ios::binary);
  if (!f.write(html.data(), static_cast<std::streamsize>(html.size()))) {
    throw UserError(o.output + ": cannot write");
  }
  size_t instructions = 0;
  for (const auto& m : data["methods"]) instructions += m["instructions"].size();
  std::printf("%s: %zu instruction(s)%s%s, %zu bytes\n", o.output.c_str(), instructions,
              data["graph_info"].is_null() ? "" : ", graph info", o.trace.empty() ? "" : ", timing",
              html.size());
}

}  // namespace

void add_explore_command(CLI::App& app) {
  auto opts = std::make_shared<ExploreOptions>();
  CLI::App* cmd = app.add_subcommand(
      "explore", "Write a standalone HTML page exploring a program: graph, timing, memory plan");
  cmd->add_option("program", opts->program, "program file (.pte)")->required();
  cmd->add_option("--trace", opts->trace,
                  "an ETDump (pteron profile -o T writes T.etdp): per-instruction time overlay");
  cmd->add_option("-o,--output", opts->output, "HTML file to write")->required();
  cmd->callback([opts] { explore(*opts); });
}

}  // namespace pteron::cli
