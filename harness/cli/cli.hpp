#pragma once

#include <ostream>

namespace ckpt::harness {

// The whole command line: parses argv, runs the chosen subcommand, prints errors as one
// "ckptbench: error: ..." line on `err`. Returns the process exit status (0 ok, 2 bad input).
int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace ckpt::harness
