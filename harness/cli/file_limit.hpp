#pragma once

#include <string>

namespace ckpt::harness {

// Raises the soft RLIMIT_NOFILE to the hard limit (file-per-tensor checkpoints open many
// files: 1,932 per Llama 3 70B rank). Called once at the start of `ckptbench run`. Returns the
// note for every case's `notes` ("open files: soft limit raised from 1024 to 524288", or why not),
// or "" when the soft limit already was the hard one.
std::string raise_open_file_limit();

}  // namespace ckpt::harness
