#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "workloads/spec_error.hpp"

namespace ckpt::workloads {

// Runs `make`, expects a SpecError with `key` whose message contains every fragment.
template <typename Make>
void expect_spec_error(Make make, const std::string& key,
                       std::initializer_list<std::string> fragments) {
  try {
    make();
    ADD_FAILURE() << "no error; expected one for " << key;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    for (const auto& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << f << " in: " << e.what();
  }
}

}  // namespace ckpt::workloads
