#pragma once

// The fixture of the campaigns through the s3 backend against a real S3 server (moto's, started
// by run_with_moto.sh with CKPT_TEST_S3_* and AWS_* in the environment): ckptbench runs and loads
// with the server's options, and the bucket read through the backend's own primitives.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/object_store.hpp"
#include "backends/registry.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {

// A model whose full state on one rank (about 20 MiB) is a multipart upload of 5 MiB parts.
inline constexpr const char* kPartedModel = R"(name = "parted"
hidden_size = 256
intermediate_size = 512
num_hidden_layers = 2
num_attention_heads = 4
num_key_value_heads = 2
vocab_size = 256
)";

// Four modeled ranks (TP 2, PP 2), two kept checkpoints: the second retires the first. The
// tensors lie back to back (strategy.framing = "off"): the read counts reason about which ranges
// are adjacent in an object.
inline constexpr const char* kFourRanksKept = R"(keep = true
iterations = 2
warmup = 0
[parallel]
tp = 2
pp = 2
[strategy]
framing = "off"
)";

inline std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

class S3Campaign : public ::testing::Test {
 protected:
  void SetUp() override {
    if (environment("CKPT_TEST_S3_ENDPOINT").empty())
      GTEST_SKIP() << "no S3 server: run through tests/backends/s3/run_with_moto.sh";
  }

  // The tiny model's full state, one rank, file per rank, through s3 under a prefix of its own
  // (`name`), the campaign's own keys after its [campaign] table in `rest`; results under
  // out-`output`.
  // `processes` > 0: under mpirun with that many processes.
  Outcome run_campaign(const std::string& name, const std::string& rest,
                       const std::vector<std::string>& more = {}, std::string output = "",
                       int processes = 0) {
    if (output.empty()) output = name;
    const fs::path model = dir_.write("tiny.toml", kTinyModel);
    const fs::path file = dir_.write(name + ".toml", campaign_toml(name, target(), rest + R"(
[model]
name = ")" + model.string() + R"("
[state]
scope = "full"
[cache]
policy = "none"
[backend]
name = "s3"
)"));
    std::vector<std::string> args{"run", file.string(), "--output",
                                  (dir_ / ("out-" + output)).string(), "-q"};
    for (const std::string& arg : server_options(name)) args.push_back(arg);
    args.insert(args.end(), more.begin(), more.end());
    if (processes == 0) return ckptbench(args);
    std::vector<std::string> argv = mpirun_args(*find_mpirun(), processes);
    argv.push_back(kBinary);
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, std::chrono::seconds(240));
  }

  std::vector<nlohmann::json> run(const std::string& name, int iterations) {
    const Outcome o =
        run_campaign(name, "create_target = true\niterations = " + std::to_string(iterations) +
                               "\nwarmup = 0\n");
    EXPECT_EQ(o.exit_code, 0) << o.describe();
    return read_results(dir_ / ("out-" + name));
  }

  fs::path target() const { return dir_ / "target"; }

  // The rules of the proxy in front of the server (fault_proxy.py, at CKPT_TEST_S3_PROXY), in
  // force from its next request on.
  static void faults(const std::string& rules) {
    std::ofstream(environment("CKPT_TEST_S3_FAULTS"), std::ios::trunc) << rules;
  }

  // --set of the server's options, the objects under prefix `name`.
  static std::vector<std::string> server_options(const std::string& name) {
    return {"--set", "backend.s3.endpoint=" + environment("CKPT_TEST_S3_ENDPOINT"),
            "--set", "backend.s3.bucket=" + environment("CKPT_TEST_S3_BUCKET"),
            "--set", "backend.s3.region=" + environment("CKPT_TEST_S3_REGION"),
            "--set", "backend.s3.prefix=" + name};
  }

  // The bucket under prefix `name`, through the backend's own primitives.
  static std::unique_ptr<backends::Backend> bucket(const std::string& name) {
    return backends::make_backend("s3", {},
                                  {{"endpoint", environment("CKPT_TEST_S3_ENDPOINT")},
                                   {"bucket", environment("CKPT_TEST_S3_BUCKET")},
                                   {"region", environment("CKPT_TEST_S3_REGION")},
                                   {"prefix", name}});
  }
  fs::path case_dir(const std::string& name) const { return target() / name / "case-0000"; }

  // The objects under case 0 of campaign `name` (written under prefix `name`), by their path
  // below the case directory, in key order.
  std::vector<std::string> case_objects(const std::string& name) const {
    const auto backend = bucket(name);
    auto* store = dynamic_cast<backends::ObjectStore*>(backend.get());
    const std::string folder = case_dir(name).string() + "/";
    std::vector<std::string> paths;
    for (const backends::StoredObject& o : store->list(folder))
      paths.push_back(o.path.substr(folder.size()));
    return paths;
  }

  Scratch dir_;
};

}  // namespace ckpt::integration
