// Campaigns through the s3 backend with several endpoints and over https, against a real S3 server
// (moto's, started by run_with_moto.sh --tls): two endpoints are the server itself and the proxy
// in front of it (fault_proxy.py), so both serve one bucket. Requests are counted per endpoint,
// exactly where the choice is by rank; the store's requests are summed over every process; an
// https endpoint is trusted through backend.s3.ca_file, and refused before any data moves without
// it.
#include <string>
#include <vector>

#include "tests/backends/s3/s3_campaign_support.hpp"

namespace ckpt::integration {
namespace {

// The sum of a counters object's requests by kind ("requests.<kind>").
std::uint64_t requests_of_every_kind(const nlohmann::json& counters) {
  std::uint64_t sum = 0;
  for (const auto& [name, count] : counters.items())
    if (name.starts_with("requests.")) sum += count.get<std::uint64_t>();
  return sum;
}

class S3Endpoints : public S3Campaign {
 protected:
  void SetUp() override {
    S3Campaign::SetUp();
    if (!IsSkipped() && environment("CKPT_TEST_S3_PROXY").empty())
      GTEST_SKIP() << "no proxy in front of the server: run through run_with_moto.sh";
  }
  void TearDown() override { faults(""); }
};

// One process, the 20 MiB object in four 5 MiB parts, two requests in flight, the proxy (the
// first endpoint, where ties go) slow for the object's requests: while a part waits there, the
// next part goes to the server directly, so both endpoints serve the write and the read. Every
// request is counted at one endpoint: their counts add up to the requests by kind, exactly.
TEST_F(S3Endpoints, LeastLoadedSpreadsRequestsOverBothEndpointsAndCountsEachOnce) {
  const fs::path model = dir_.write("parted.toml", kPartedModel);
  faults("delay 300 __0_0.distcp\n");
  const Outcome o = run_campaign(
      "least", "create_target = true\niterations = 1\nwarmup = 0\n",
      {"--set", "model.name=" + model.string(), "--set", "backend.s3.part_size=5242880", "--set",
       "backend.s3.concurrency=2", "--set", "backend.s3.endpoint_choice=least_loaded", "--set",
       "backend.s3.endpoint=" + environment("CKPT_TEST_S3_PROXY") + "," +
           environment("CKPT_TEST_S3_ENDPOINT")});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const nlohmann::json r = read_results(dir_ / "out-least").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.dump();
  EXPECT_EQ(r.at("verified"), true);
  for (const char* phase : {"write", "read"}) {
    const nlohmann::json& counters = r.at("phases").at(phase).at("counters");
    EXPECT_EQ(counters.at("requests.part").get<std::uint64_t>() +
                  counters.at("requests.ranged_get").get<std::uint64_t>(),
              4u)
        << counters.dump();
    const auto first = counters.at("endpoint.0.requests").get<std::uint64_t>();
    const auto second = counters.at("endpoint.1.requests").get<std::uint64_t>();
    EXPECT_GE(first, 1u) << phase << ": " << counters.dump();
    EXPECT_GE(second, 1u) << phase << ": " << counters.dump();
    EXPECT_EQ(first + second, requests_of_every_kind(counters)) << counters.dump();
  }
  const nlohmann::json& store = r.at("store_requests");
  EXPECT_EQ(store.at("endpoint.0.requests").get<std::uint64_t>() +
                store.at("endpoint.1.requests").get<std::uint64_t>(),
            requests_of_every_kind(store))
      << store.dump();
}

// Four processes, endpoints chosen by rank: processes 0 and 2 send every request to the server,
// 1 and 3 to the proxy, so each endpoint gets exactly its two processes' PUTs. The checkpoint
// store's requests are summed over all four processes: process 0 alone lists (and only it uses
// the store at all), so the most one process made equals the sum, and the second endpoint, which
// process 0 never uses, got none of them.
TEST_F(S3Endpoints, FourProcessesByRankCountPerEndpointAndEveryProcesssListings) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const Outcome written =
      run_campaign("ranked", kFourRanksKept,
                   {"--phase", "checkpoint", "--set",
                    "backend.s3.endpoint=" + environment("CKPT_TEST_S3_ENDPOINT") + "," +
                        environment("CKPT_TEST_S3_PROXY")},
                   "", 4);
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const nlohmann::json w = read_results(dir_ / "out-ranked").at(0);
  ASSERT_EQ(w.at("status"), "ok") << w.dump();
  const nlohmann::json& data = w.at("phases").at("write").at("counters");
  EXPECT_EQ(data.at("requests.put"), 8) << data.dump();  // 4 files, 2 checkpoints
  EXPECT_EQ(data.at("endpoint.0.requests"), 4) << data.dump();
  EXPECT_EQ(data.at("endpoint.1.requests"), 4) << data.dump();
  const nlohmann::json& store = w.at("store_requests");
  const nlohmann::json& most = w.at("store_requests_max");
  // Listed for the target, under the lock (objects and unfinished multipart uploads) and to
  // retire checkpoint 1: by process 0, and by no other process.
  EXPECT_EQ(store.at("requests.list"), 4) << store.dump();
  EXPECT_EQ(most.at("requests.list"), 4) << most.dump();
  EXPECT_EQ(store, most) << "one process made every request of the store";
  EXPECT_EQ(store.at("endpoint.0.requests"), requests_of_every_kind(store)) << store.dump();
  EXPECT_EQ(store.at("endpoint.1.requests"), 0) << store.dump();
}

class S3Https : public S3Campaign {
 protected:
  void SetUp() override {
    S3Campaign::SetUp();
    if (!IsSkipped() && environment("CKPT_TEST_S3_TLS_ENDPOINT").empty())
      GTEST_SKIP() << "no https server: run through run_with_moto.sh --tls (it needs openssl)";
  }
  // --set of the https endpoint, and of backend.s3.ca_file = `ca_file` unless it is empty.
  static std::vector<std::string> over_https(const std::string& ca_file) {
    std::vector<std::string> set{"--set",
                                 "backend.s3.endpoint=" + environment("CKPT_TEST_S3_TLS_ENDPOINT")};
    if (!ca_file.empty()) set.insert(set.end(), {"--set", "backend.s3.ca_file=" + ca_file});
    return set;
  }
};

// Through https with the certificate authority that signed the server's certificate: written and
// restored, verified.
TEST_F(S3Https, ACampaignOverHttpsWithTheCaFileWritesAndRestoresVerified) {
  const Outcome o = run_campaign("tls", "create_target = true\niterations = 1\nwarmup = 0\n",
                                 over_https(environment("CKPT_TEST_S3_CA_FILE")));
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const nlohmann::json r = read_results(dir_ / "out-tls").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.dump();
  EXPECT_EQ(r.at("verified"), true);
  EXPECT_EQ(r.at("phases").at("write").at("counters").at("requests.put"), 1) << r.dump();
  EXPECT_EQ(r.at("phases").at("read").at("counters").at("requests.ranged_get"), 1);
}

// Without backend.s3.ca_file (the system's authorities know nothing of the test's), or with one
// that did not sign the certificate: one message naming the endpoint and the key, exit 2, and no
// object written.
TEST_F(S3Https, AnEndpointWhoseCertificateDoesNotVerifyIsRefusedNamingCaFile) {
  const std::string endpoint = environment("CKPT_TEST_S3_TLS_ENDPOINT");
  const std::string message =
      "s3: the certificate of backend.s3.endpoint \"" + endpoint + "\" does not verify against ";
  for (const std::string& ca_file : {std::string(), environment("CKPT_TEST_S3_OTHER_CA_FILE")}) {
    const Outcome o = run_campaign(
        "untrusted", "create_target = true\niterations = 1\nwarmup = 0\n", over_https(ca_file));
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    const std::size_t first = o.err.find(message);
    EXPECT_NE(first, std::string::npos) << o.err;
    EXPECT_EQ(o.err.find(message, first + 1), std::string::npos) << "said once: " << o.err;
    EXPECT_TRUE(contains(o.err, "set backend.s3.ca_file to the PEM file")) << o.err;
    if (!ca_file.empty()) {
      EXPECT_TRUE(contains(o.err, "backend.s3.ca_file = \"" + ca_file + "\"")) << o.err;
    }
    EXPECT_TRUE(case_objects("untrusted").empty());
  }
}

}  // namespace
}  // namespace ckpt::integration
