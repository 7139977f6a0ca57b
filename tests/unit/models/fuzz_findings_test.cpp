// What the fuzzers found (tests/fuzz/regressions/ keeps the inputs), each with its exact error.
#include <gtest/gtest.h>

#include <string>

#include "harness/common/config_error.hpp"
#include "harness/models/model_file.hpp"

namespace ckpt::harness {
namespace {

TEST(FuzzFindings, HfNumberBeyondDoubleIsAConfigError) {
  try {
    parse_model_hf_json(R"({"hidden_size": 4096, "rope_theta": 1e5555})", "cfg.json");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cfg.json: JSON number out of range: number overflow parsing '1e5555'");
  }
}

}  // namespace
}  // namespace ckpt::harness
