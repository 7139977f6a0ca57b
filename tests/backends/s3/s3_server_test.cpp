// The s3 backend against a real S3 server: moto's, started by moto_fixture.py on a free port of
// 127.0.0.1 with signatures enforced (CKPT_TEST_S3_* and AWS_* in the environment). Without
// it, every case here is skipped, saying so.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/object_store.hpp"
#include "backends/registry.hpp"
#include "tests/backends/backend_test_support.hpp"

namespace ckpt::backends {
namespace {

using test_support::Buffer;
using test_support::contains;
using test_support::expect_read_back;
using test_support::file_plan;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// A port nothing listens on: bound, read and closed again (connections to it are refused).
std::string closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return std::to_string(ntohs(address.sin_port));
}

class S3Server : public testing::Test {
 protected:
  void SetUp() override {
    if (environment("CKPT_TEST_S3_ENDPOINT").empty()) {
      GTEST_SKIP() << "no S3 server: ctest runs these under tests/backends/s3/moto_fixture.py "
                      "(ci/setup.sh installs moto into .deps/venv)";
    }
  }
  // Each test writes under its own prefix, so tests never see each other's objects.
  BackendOptions options(BackendOptions extra = {}) const {
    BackendOptions o{{"endpoint", environment("CKPT_TEST_S3_ENDPOINT")},
                     {"bucket", environment("CKPT_TEST_S3_BUCKET")},
                     {"region", environment("CKPT_TEST_S3_REGION")},
                     {"prefix", testing::UnitTest::GetInstance()->current_test_info()->name()},
                     {"retries", "1"},
                     {"backoff_ms", "1"}};
    for (const auto& [key, value] : extra) o[key] = value;
    return o;
  }
  std::unique_ptr<Backend> make(BackendOptions extra = {}) const {
    return make_backend("s3", {}, options(std::move(extra)));
  }
  std::string refusal(BackendOptions extra) const {
    try {
      make(std::move(extra));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  }
};

std::uint64_t count(const IoOutcome& outcome, const std::string& name) {
  return outcome.counters.at(name);
}

TEST_F(S3Server, SmallObjectsArePutWholeAndReadBackByteExact) {
  // Three objects below part_size, with gaps between extents (zeros in the object).
  const IoPlan plan{{file_plan("/ckpt/a.bin", {{0, 0, 1000}, {4096, 1000, 3000}}),
                     file_plan("/ckpt/sub/b.bin", {{10, 4000, 12345}}),
                     file_plan("/ckpt/c.bin", {{0, 16345, 1}})}};
  Buffer source(16346);
  source.fill(1);
  const auto backend = make();
  const IoOutcome written = backend->write(plan, source.view());
  ASSERT_TRUE(written.ok()) << *written.error;
  EXPECT_EQ(written.bytes, 16346u);
  EXPECT_EQ(count(written, "requests.put"), 3u);
  EXPECT_EQ(count(written, "requests.part"), 0u);
  EXPECT_EQ(count(written, "requests.multipart"), 0u);
  EXPECT_EQ(count(written, "retries"), 0u);
  expect_read_back(*backend, plan, source);
  // The gap of a.bin reads as zeros.
  const Buffer gap(3096);
  const IoOutcome hole =
      backend->read(IoPlan{{file_plan("/ckpt/a.bin", {{1000, 0, 3096}})}}, gap.view());
  ASSERT_TRUE(hole.ok()) << *hole.error;
  EXPECT_EQ(std::count(gap.data(), gap.data() + 3096, std::byte{0}), 3096);
}

TEST_F(S3Server, LargeObjectsGoAsMultipartUploadsWithConcurrentParts) {
  // 12 MiB + 100 bytes in 5 MiB parts: 3 parts, the last 2 MiB + 100 bytes.
  const std::uint64_t size = 12 * kMiB + 100;
  const IoPlan plan{
      {file_plan("/ckpt/big.bin", {{0, 0, 7 * kMiB}, {7 * kMiB, 7 * kMiB, size - 7 * kMiB}})}};
  Buffer source(size);
  source.fill(2);
  const auto backend = make({{"part_size", std::to_string(5 * kMiB)}, {"concurrency", "3"}});
  const IoOutcome written = backend->write(plan, source.view());
  ASSERT_TRUE(written.ok()) << *written.error;
  EXPECT_EQ(count(written, "requests.part"), 3u);
  EXPECT_EQ(count(written, "requests.multipart"), 2u);  // create and complete
  EXPECT_EQ(count(written, "requests.put"), 0u);
  const Buffer back(size);
  const IoOutcome read = backend->read(plan, back.view());
  ASSERT_TRUE(read.ok()) << *read.error;
  // The two extents are adjacent: one range, cut at part_size: 3 ranged GETs.
  EXPECT_EQ(count(read, "requests.ranged_get"), 3u);
  EXPECT_EQ(std::memcmp(back.data(), source.data(), size), 0);
}

TEST_F(S3Server, ScatteredExtentsAreReadWithOneRangedGetPerAdjacentRun) {
  const IoPlan whole{{file_plan("/ckpt/scatter.bin", {{0, 0, 65536}})}};
  Buffer source(65536);
  source.fill(3);
  const auto backend = make();
  ASSERT_TRUE(backend->write(whole, source.view()).ok());
  // Runs: [100,300) as two adjacent extents landing apart in memory, [1000,1001), [60000,65536).
  const IoPlan scattered{
      {file_plan("/ckpt/scatter.bin",
                 {{60000, 0, 5536}, {100, 6000, 150}, {250, 5536, 50}, {1000, 7000, 1}})}};
  const Buffer back(7001);
  const IoOutcome read = backend->read(scattered, back.view());
  ASSERT_TRUE(read.ok()) << *read.error;
  EXPECT_EQ(count(read, "requests.ranged_get"), 3u);
  EXPECT_EQ(read.bytes, 5536u + 150 + 50 + 1);
  for (const Extent& e : scattered.files[0].extents) {
    EXPECT_EQ(std::memcmp(back.data() + e.memory_offset, source.data() + e.file_offset, e.length),
              0)
        << "extent at object offset " << e.file_offset;
  }
}

TEST_F(S3Server, AMissingObjectIsAnIoErrorNamingIt) {
  const Buffer memory(10);
  const IoOutcome read =
      make()->read(IoPlan{{file_plan("/ckpt/never-written.bin", {{0, 0, 10}})}}, memory.view());
  ASSERT_FALSE(read.ok());
  const std::string bucket = environment("CKPT_TEST_S3_BUCKET");
  EXPECT_TRUE(contains(*read.error, "s3://" + bucket +
                                        "/AMissingObjectIsAnIoErrorNamingIt/ckpt/"
                                        "never-written.bin"))
      << *read.error;
  EXPECT_TRUE(contains(*read.error, "HTTP 404 NoSuchKey")) << *read.error;
  EXPECT_EQ(read.bytes, 0u);
}

TEST_F(S3Server, AnObjectShorterThanThePlanIsAnIoError) {
  const auto backend = make();
  Buffer source(100);
  ASSERT_TRUE(
      backend->write(IoPlan{{file_plan("/ckpt/short.bin", {{0, 0, 100}})}}, source.view()).ok());
  const Buffer memory(200);
  const IoOutcome read =
      backend->read(IoPlan{{file_plan("/ckpt/short.bin", {{0, 0, 200}})}}, memory.view());
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(contains(*read.error, "object shorter than the plan (100 of 200 bytes)"))
      << *read.error;
}

TEST_F(S3Server, SharedFilesAreRefusedSayingWhyAndWhatToDo) {
  FilePlan shared = file_plan("/ckpt/shared.bin", {{0, 0, 10}});
  shared.shared = true;
  const Buffer memory(10);
  const IoOutcome written = make()->write(IoPlan{{shared}}, memory.view());
  ASSERT_FALSE(written.ok());
  EXPECT_TRUE(contains(*written.error, "/ckpt/shared.bin")) << *written.error;
  EXPECT_TRUE(contains(*written.error, "written whole by one process")) << *written.error;
  EXPECT_TRUE(contains(*written.error, "strategy.mapping = \"file_per_rank\"")) << *written.error;
  EXPECT_EQ(written.counters.at("requests.put"), 0u);
}

TEST_F(S3Server, AnUnreachableEndpointIsRefusedBeforeAnyData) {
  const std::string endpoint = "http://127.0.0.1:" + closed_port();
  const std::string message = refusal({{"endpoint", endpoint}});
  EXPECT_TRUE(contains(message, "s3: cannot reach backend.s3.endpoint \"" + endpoint + "\""))
      << message;
}

TEST_F(S3Server, AMissingBucketIsRefusedBeforeAnyData) {
  const std::string message = refusal({{"bucket", "no-such-bucket"}});
  EXPECT_TRUE(contains(message, "bucket `no-such-bucket` does not exist")) << message;
}

TEST_F(S3Server, WrongCredentialsAreRefusedWithoutShowingThem) {
  const std::string secret = environment("AWS_SECRET_ACCESS_KEY");
  ::setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret", 1);
  const std::string message = refusal({});
  ::setenv("AWS_SECRET_ACCESS_KEY", secret.c_str(), 1);
  EXPECT_TRUE(contains(message, "refused the credentials")) << message;
  EXPECT_FALSE(contains(message, "not-the-secret")) << message;
  EXPECT_FALSE(contains(message, environment("AWS_ACCESS_KEY_ID"))) << message;
}

TEST_F(S3Server, AFailedWriteAbortsItsMultipartUploadsAndLeavesNothingVisible) {
  // The fixture's policy refuses writes under "denied/": the small object fails while the large
  // one's multipart upload is open.
  const std::uint64_t big = 6 * kMiB;
  const IoPlan plan{{file_plan("/ckpt/big.bin", {{0, 0, big}}),
                     file_plan("/ckpt/denied/small.bin", {{0, big, 100}})}};
  Buffer source(big + 100);
  const auto backend = make({{"part_size", std::to_string(5 * kMiB)}, {"concurrency", "1"}});
  const IoOutcome written = backend->write(plan, source.view());
  ASSERT_FALSE(written.ok());
  EXPECT_TRUE(contains(*written.error, "AccessDenied")) << *written.error;
  EXPECT_TRUE(contains(*written.error, "/ckpt/denied/small.bin")) << *written.error;
  EXPECT_EQ(count(written, "requests.multipart"), 2u);  // created, then aborted
  EXPECT_EQ(written.bytes, 0u);
  const Buffer back(10);
  const IoOutcome read =
      backend->read(IoPlan{{file_plan("/ckpt/big.bin", {{0, 0, 10}})}}, back.view());
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(contains(*read.error, "HTTP 404 NoSuchKey")) << *read.error;
}

TEST_F(S3Server, RequestLatenciesAreTimedWhenAsked) {
  const IoPlan plan{{file_plan("/ckpt/big.bin", {{0, 0, 11 * kMiB}})}};
  Buffer source(11 * kMiB);
  const auto backend = make_backend("s3", IoSettings{.request_latency = true},
                                    options({{"part_size", std::to_string(5 * kMiB)}}));
  const IoOutcome written = backend->write(plan, source.view());
  ASSERT_TRUE(written.ok()) << *written.error;
  ASSERT_TRUE(written.latency.has_value());
  EXPECT_EQ(written.latency->count(), 5u);  // create, 3 parts, complete
  EXPECT_GT(written.latency->min(), 0u);
}

TEST_F(S3Server, TheObjectStoreGetsPutsListsAndRemovesWholeObjects) {
  const auto backend = make();
  auto* store = dynamic_cast<ObjectStore*>(backend.get());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->get("/case/latest"), std::nullopt);
  store->put("/case/latest", "iter_0000002");
  store->put("/case/iter_0000001/manifest.json", std::string(3000, 'm'));
  store->put("/case/iter_0000002/manifest.json", "{}");
  store->put("/casework/other", "x");  // shares the text of the prefix, not its folder
  EXPECT_EQ(store->get("/case/latest"), "iter_0000002");
  std::vector<StoredObject> listed = store->list("/case/");
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].path, "/case/iter_0000001/manifest.json");
  EXPECT_EQ(listed[0].size, 3000u);
  EXPECT_EQ(listed[1].path, "/case/iter_0000002/manifest.json");
  EXPECT_EQ(listed[2].path, "/case/latest");
  EXPECT_EQ(listed[2].size, 12u);
  std::map<std::string, std::uint64_t> counts = store->take_counters();
  EXPECT_EQ(counts["requests.put"], 4u);
  EXPECT_EQ(counts["requests.get"], 2u);
  EXPECT_EQ(counts["requests.list"], 1u);
  store->remove({"/case/iter_0000001/manifest.json", "/case/latest", "/case/never-written"});
  listed = store->list("/case/");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].path, "/case/iter_0000002/manifest.json");
  counts = store->take_counters();
  EXPECT_EQ(counts["requests.delete"], 1u);  // one batch
  EXPECT_EQ(counts["requests.list"], 1u);
  EXPECT_EQ(counts["requests.put"], 0u);
}

// The case lock of a checkpoint store: a conditional PUT that only the first writer wins.
TEST_F(S3Server, CreateWritesAnObjectOnlyWhenNoneIsThere) {
  const auto backend = make();
  auto* store = dynamic_cast<ObjectStore*>(backend.get());
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->create("/case/.lock", "first 1\n"));
  EXPECT_FALSE(store->create("/case/.lock", "second 2\n"));
  EXPECT_EQ(store->get("/case/.lock"), "first 1\n");
  store->remove({"/case/.lock"});
  EXPECT_TRUE(store->create("/case/.lock", "third 3\n"));
  const std::map<std::string, std::uint64_t> counts = store->take_counters();
  EXPECT_EQ(counts.at("requests.put"), 3u);
  EXPECT_EQ(counts.at("requests.get"), 1u);
  EXPECT_EQ(counts.at("requests.delete"), 1u);
}

TEST_F(S3Server, UploadsAKilledWriterLeftOpenAreAborted) {
  // The fixture left one open under fixture/stale/.
  const auto backend = make({{"prefix", "fixture"}});
  auto* store = dynamic_cast<ObjectStore*>(backend.get());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->abort_uploads("/elsewhere/"), 0u);
  EXPECT_EQ(store->abort_uploads("/stale/"), 1u);
  EXPECT_EQ(store->abort_uploads("/stale/"), 0u);
  const std::map<std::string, std::uint64_t> counts = store->take_counters();
  EXPECT_EQ(counts.at("requests.list"), 3u);
  EXPECT_EQ(counts.at("requests.multipart"), 1u);
}

}  // namespace
}  // namespace ckpt::backends
