// Starting a program and waiting for it: the one way pteron's tools run another program
// (Vela, the ML SDK model converter, the Arm toolchain and QEMU for firmware). No shell: the
// arguments go to the program as given, so paths with spaces or quotes need no quoting.
#pragma once

#include <string>
#include <vector>

namespace pteron::host {

// Runs `args` (args[0] looked up on $PATH unless it contains a slash) and waits for it. Its
// stdout and stderr both go to the file `log_path` (created or truncated) when it is not
// empty, else to this process's. Returns the program's exit status, 128 + the signal that
// ended it, or 127 when it could not be started, with `error` (when given) saying why
// ("cannot run vela: No such file or directory").
int run_process(const std::vector<std::string>& args, const std::string& log_path = "",
                std::string* error = nullptr);

// The same with stdout and stderr captured into `output` (appended, interleaved as written).
int run_process_captured(const std::vector<std::string>& args, std::string* output,
                         std::string* error = nullptr);

}  // namespace pteron::host
