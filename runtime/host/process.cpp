#include "runtime/host/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace pteron::host {
namespace {

constexpr int kNotStarted = 127;

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return kNotStarted;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 128;
}

// 0 when `name` is an executable file (looked up on $PATH unless it contains a slash), else
// the errno saying why not. Checked before spawning: posix_spawn reports a failed exec only
// where the C library can see it (not under qemu-user, whose vfork is a fork: the child just
// exits 127), and this says why the same way everywhere.
int find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? 0 : errno;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  int why = ENOENT;
  for (size_t begin = 0; begin <= dirs.size();) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > begin ? dirs.substr(begin, end - begin) : ".";
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return 0;
    if (errno == EACCES) why = EACCES;
    begin = end + 1;
  }
  return why;
}

// Starts `args` with `actions` applied to its file descriptors; 0 or the errno of the failure.
int spawn(const std::vector<std::string>& args, posix_spawn_file_actions_t* actions, pid_t* pid) {
  if (args.empty()) return EINVAL;
  if (const int missing = find_program(args[0]); missing != 0) return missing;
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return posix_spawnp(pid, argv[0], actions, nullptr, argv.data(), environ);
}

int not_started(const std::vector<std::string>& args, int rc, std::string* error) {
  if (error != nullptr)
    *error = "cannot run " + (args.empty() ? std::string("(nothing)") : args[0]) + ": " +
             std::strerror(rc);
  return kNotStarted;
}

}  // namespace

int run_process(const std::vector<std::string>& args, const std::string& log_path,
                std::string* error) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  pid_t pid = 0;
  const int rc = spawn(args, &actions, &pid);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return not_started(args, rc, error);
  return wait_for(pid);
}

int run_process_captured(const std::vector<std::string>& args, std::string* output,
                         std::string* error) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return not_started(args, errno, error);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  pid_t pid = 0;
  const int rc = spawn(args, &actions, &pid);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return not_started(args, rc, error);
  }
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      output->append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  return wait_for(pid);
}

}  // namespace pteron::host
