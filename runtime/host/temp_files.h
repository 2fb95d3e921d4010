// Files the tools hand to another program and read back (Vela, the ML SDK model converter, the
// firmware build, `pteron tune`'s micro-programs): the one temporary directory and text-file
// reader they share, next to process.h. Hosted only; no exceptions (callers raise their own).
#pragma once

#include <filesystem>
#include <string>

namespace pteron::host {

// A fresh directory "<prefix>-XXXXXX" in the system's temporary directory ($TMPDIR, else /tmp),
// removed with everything in it when the object goes, unless keep() was called. ok() is false
// (and path() empty) when it could not be made.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }
  // Leave the directory behind (a debugging switch such as PTERON_KEEP_VELA).
  void keep() { keep_ = true; }
  // Where it was to be made, for an error message when !ok().
  const std::filesystem::path& parent() const { return parent_; }

 private:
  std::filesystem::path parent_, path_;
  bool keep_ = false;
};

// The whole content of the file at `path`; "" when it cannot be read, with *ok (when given)
// saying which.
std::string read_text_file(const std::filesystem::path& path, bool* ok = nullptr);

}  // namespace pteron::host
