#include "runtime/host/temp_files.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace pteron::host {

TempDir::TempDir(const std::string& prefix) {
  std::error_code ec;
  parent_ = std::filesystem::temp_directory_path(ec);
  if (ec) parent_ = "/tmp";
  std::string tmpl = (parent_ / (prefix + "-XXXXXX")).string();  // mkdtemp's template
  if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
}

TempDir::~TempDir() {
  if (path_.empty() || keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_text_file(const std::filesystem::path& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  if (ok != nullptr) *ok = static_cast<bool>(in);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace pteron::host
