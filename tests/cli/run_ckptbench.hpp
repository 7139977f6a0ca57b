#pragma once
// Runs the ckptbench binary (CKPTBENCH_BIN) as a user does, through the shell.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace ckpt::cli_test {

struct CommandResult {
  int status = -1;
  std::string out;  // stdout and stderr together
};

inline CommandResult run(const std::string& args) {
  const std::string command = std::string(CKPTBENCH_BIN) + " " + args + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    result.out.append(buffer.data(), n);
  const int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return result;
}

}  // namespace ckpt::cli_test
