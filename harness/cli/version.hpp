#pragma once

#include <string>

namespace ckpt::harness {

// `ckptbench --version`. The first line is "ckptbench <version> (git <revision>, <build type>)"
// (help2man reads it); then the backends and memory spaces compiled in, each available or why
// not, and the versions of the libraries built against. Probes the backends (the gds one tries
// to load libcufile) and the memory spaces; starts neither MPI nor CUDA contexts beyond what
// those probes do.
std::string version_text();

}  // namespace ckpt::harness
