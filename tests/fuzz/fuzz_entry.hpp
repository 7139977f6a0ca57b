#pragma once
// What a fuzz target may do with an input: return, or throw ConfigError (the documented error
// of every reader: file, line, key). Any other exception escaping is a finding: it is printed
// and the process aborts, so that libFuzzer keeps the input and the replay test fails.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "harness/common/config_error.hpp"

namespace ckpt::fuzz {

template <typename Body>
int run_one(Body&& body) {
  try {
    body();
  } catch (const harness::ConfigError&) {
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception other than ConfigError escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}

}  // namespace ckpt::fuzz
