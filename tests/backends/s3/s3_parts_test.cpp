// The s3 backend's pure parts: keys, URL encoding and addressing, canonical queries, object
// bytes from extents, coalesced ranged reads, option checks, the choice of endpoint. No server
// needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "backends/s3/s3_checksum.hpp"
#include "backends/s3/s3_config.hpp"
#include "backends/s3/s3_counters.hpp"
#include "backends/s3/s3_endpoints.hpp"
#include "backends/s3/s3_extents.hpp"
#include "backends/s3/s3_url.hpp"
#include "backends/s3/s3_xml.hpp"

namespace ckpt::backends::s3 {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(S3Keys, PrefixAndPathWithoutItsLeadingSlashNormalised) {
  EXPECT_EQ(object_key("", "/ckpt/iter_0000001/a.bin"), "ckpt/iter_0000001/a.bin");
  EXPECT_EQ(object_key("run7", "/ckpt/a.bin"), "run7/ckpt/a.bin");
  EXPECT_EQ(object_key("run7/", "ckpt/./x/../a.bin"), "run7/ckpt/a.bin");
  EXPECT_EQ(object_key("a/b//", "//c"), "a/b/c");
  EXPECT_THROW(object_key("p", "../outside"), std::invalid_argument);
  EXPECT_THROW(object_key("p", "/"), std::invalid_argument);
  EXPECT_THROW(object_key("p", ""), std::invalid_argument);
}

TEST(S3Urls, EncodingKeepsUnreservedBytesAndSlashesInKeys) {
  EXPECT_EQ(uri_encode("a-b_c.d~e/f g+h=%", true), "a-b_c.d~e/f%20g%2Bh%3D%25");
  EXPECT_EQ(uri_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(uri_encode("\xc3\xa9", true), "%C3%A9");
}

TEST(S3Urls, QueriesAreSortedByNameWithEmptyValuesKeepingTheirEquals) {
  EXPECT_EQ(canonical_query({{"uploadId", "x/y"}, {"partNumber", "7"}}),
            "partNumber=7&uploadId=x%2Fy");
  EXPECT_EQ(canonical_query({{"uploads", ""}}), "uploads=");
}

TEST(S3Urls, PathAndVirtualHostAddressing) {
  const Addressing path{"http://127.0.0.1:9000", "ckpt", false};
  EXPECT_EQ(path.bucket_url(), "http://127.0.0.1:9000/ckpt");
  EXPECT_EQ(path.object_url("a b/c", "uploads="), "http://127.0.0.1:9000/ckpt/a%20b/c?uploads=");
  EXPECT_EQ(path.name("a b/c"), "s3://ckpt/a b/c");
  const Addressing host{"https://s3.us-east-1.amazonaws.com", "ckpt", true};
  EXPECT_EQ(host.bucket_url(), "https://ckpt.s3.us-east-1.amazonaws.com/");
  EXPECT_EQ(host.object_url("k"), "https://ckpt.s3.us-east-1.amazonaws.com/k");
}

TEST(S3Requests, DeleteChecksumIsTheCrc32OfTheBodyInBase64) {
  EXPECT_EQ(crc32_base64("hello"), "NhCmhg==");  // zlib.crc32(b"hello") = 0x3610a686
  EXPECT_EQ(crc32_base64(""), "AAAAAA==");
}

TEST(S3Requests, XmlValuesAreDecodedAndKeysEscaped) {
  const std::string xml =
      "<R><Contents><Key>a&amp;b&lt;c</Key><Size>7</Size></Contents><Contents><Key>d</Key>"
      "</Contents></R>";
  const std::vector<std::string> entries = xml_elements(xml, "Contents");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(xml_value(entries[0], "Key"), "a&b<c");
  EXPECT_EQ(xml_value(entries[0], "Size"), "7");
  EXPECT_EQ(xml_value(entries[1], "Size"), "");
  EXPECT_EQ(xml_escape("a&b<c>\"'"), "a&amp;b&lt;c&gt;&quot;&apos;");
}

TEST(S3Extents, ObjectBytesAreTheExtentsInFileOrderWithZerosBetween) {
  std::vector<std::byte> memory(100);
  const MemoryView view{memory.data(), memory.size()};
  FilePlan file{"/f", {{50, 0, 10}, {10, 20, 5}}, 70, false};
  EXPECT_EQ(object_size(file), 70u);
  const std::vector<Segment> bytes = object_segments(file, view, object_size(file));
  ASSERT_EQ(bytes.size(), 5u);
  EXPECT_EQ(bytes[0].data, nullptr);
  EXPECT_EQ(bytes[0].length, 10u);
  EXPECT_EQ(bytes[1].data, memory.data() + 20);
  EXPECT_EQ(bytes[1].length, 5u);
  EXPECT_EQ(bytes[2].length, 35u);  // zeros from 15 to 50
  EXPECT_EQ(bytes[3].data, memory.data());
  EXPECT_EQ(bytes[4].length, 10u);  // zeros from 60 to file_size 70
  const std::vector<Segment> middle = slice(bytes, 12, 52);
  ASSERT_EQ(middle.size(), 3u);
  EXPECT_EQ(middle[0].data, memory.data() + 22);
  EXPECT_EQ(middle[0].length, 3u);
  EXPECT_EQ(middle[1].length, 35u);
  EXPECT_EQ(middle[2].data, memory.data());
  EXPECT_EQ(middle[2].length, 2u);
}

TEST(S3Extents, AdjacentExtentsCoalesceIntoOneRangeCutAtTheRequestSize) {
  std::vector<std::byte> memory(1000);
  const MemoryView view{memory.data(), memory.size()};
  // [0,100) and [100,150) are adjacent in the object (not in memory); [300,400) stands alone.
  const FilePlan file{"/f", {{100, 500, 50}, {300, 200, 100}, {0, 0, 100}}, 0, false};
  const std::vector<RangeRead> reads = range_reads(file, view, 120);
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[0].first, 0u);
  EXPECT_EQ(reads[0].length, 120u);
  ASSERT_EQ(reads[0].pieces.size(), 2u);
  EXPECT_EQ(reads[0].pieces[0].data, memory.data());
  EXPECT_EQ(reads[0].pieces[0].length, 100u);
  EXPECT_EQ(reads[0].pieces[1].data, memory.data() + 500);
  EXPECT_EQ(reads[0].pieces[1].length, 20u);
  EXPECT_EQ(reads[1].first, 120u);
  EXPECT_EQ(reads[1].length, 30u);
  EXPECT_EQ(reads[1].pieces[0].data, memory.data() + 520);
  EXPECT_EQ(reads[2].first, 300u);
  EXPECT_EQ(reads[2].length, 100u);
}

TEST(S3Config, EndpointsAreSharedOutByRankModuloTheirCount) {
  const S3Config config =
      parse_config({{"endpoint", "http://a:9000, http://b:9000/"}, {"bucket", "ckpt"}});
  ASSERT_EQ(config.endpoints.size(), 2u);
  EXPECT_EQ(config.endpoint_for(0), "http://a:9000");
  EXPECT_EQ(config.endpoint_for(1), "http://b:9000");
  EXPECT_EQ(config.endpoint_for(6), "http://a:9000");
}

S3Config three_endpoints(const std::string& choice) {
  return parse_config({{"endpoint", "http://a:1,http://b:2,http://c:3"},
                       {"bucket", "ckpt"},
                       {"endpoint_choice", choice}});
}

// Process 4 of any number: its own endpoint is 4 modulo 3 = 1 (b), where ties start.
TEST(S3Endpoints, LeastLoadedTakesTheFewestInFlightTiesFromTheRanksOwnOn) {
  Endpoints endpoints(three_endpoints("least_loaded"), 4);
  EXPECT_EQ(endpoints.home().endpoint, "http://b:2");
  {
    const Endpoints::Lease first = endpoints.choose();
    EXPECT_EQ(first.index(), 1u);  // all idle: the own one
    const Endpoints::Lease second = endpoints.choose();
    EXPECT_EQ(second.index(), 2u);  // b busy: the next after it
    const Endpoints::Lease third = endpoints.choose();
    EXPECT_EQ(third.index(), 0u);  // wrapping round
    {
      const Endpoints::Lease fourth = endpoints.choose();
      EXPECT_EQ(fourth.index(), 1u);  // one each in flight: the own one again
    }
    const Endpoints::Lease fifth = endpoints.choose();
    EXPECT_EQ(fifth.index(), 1u);  // the fourth ended: b has one again, as the others
    const Endpoints::Lease sixth = endpoints.choose();
    EXPECT_EQ(sixth.index(), 2u);
  }
  EXPECT_EQ(endpoints.choose().index(), 1u) << "every lease ended: all idle again";
}

TEST(S3Endpoints, ByRankEveryRequestGoesToTheRanksOwn) {
  Endpoints endpoints(three_endpoints("rank"), 5);
  const Endpoints::Lease first = endpoints.choose();
  const Endpoints::Lease second = endpoints.choose();
  EXPECT_EQ(first.index(), 2u);
  EXPECT_EQ(second.index(), 2u);
}

TEST(S3Endpoints, ARequestMovesToAnotherEndpointWithItsPathAndQuery) {
  const S3Config path_style = three_endpoints("least_loaded");
  Endpoints endpoints(path_style, 0);
  const Request request{.url = endpoints.home().object_url("k/x", "partNumber=1")};
  const Request moved = endpoints.routed(request, 2);
  EXPECT_EQ(moved.url, "http://c:3/ckpt/k/x?partNumber=1");
  EXPECT_EQ(moved.endpoint, 2u);
  EXPECT_EQ(endpoints.routed(request, 0).url, "http://a:1/ckpt/k/x?partNumber=1");
  S3Config virtual_hosts = path_style;
  virtual_hosts.virtual_addressing = true;
  Endpoints hosts(virtual_hosts, 0);
  const Request listing{.url = hosts.home().bucket_url("list-type=2")};
  EXPECT_EQ(hosts.routed(listing, 1).url, "http://ckpt.b:2/?list-type=2");
}

TEST(S3Counters, EachEndpointsRequestsAreCountedWhenThereAreSeveral) {
  Counters counters(2);
  counters.request(RequestKind::put, 0);
  counters.request(RequestKind::part, 1);
  counters.request(RequestKind::part, 1);
  const auto snapshot = counters.snapshot();
  EXPECT_EQ(snapshot.at("endpoint.0.requests"), 1u);
  EXPECT_EQ(snapshot.at("endpoint.1.requests"), 2u);
  EXPECT_EQ(snapshot.at("requests.part"), 2u);
  counters.reset();
  EXPECT_EQ(counters.snapshot().at("endpoint.1.requests"), 0u);
  EXPECT_FALSE(Counters(1).snapshot().contains("endpoint.0.requests")) << "one endpoint: no split";
}

std::string refusal(const BackendOptions& options) {
  try {
    make_backend("s3", {}, options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(S3Config, BadOptionsAreRefusedByNameBeforeAnyRequest) {
  const BackendOptions good{{"endpoint", "http://127.0.0.1:1"}, {"bucket", "ckpt"}};
  auto with = [&](const std::string& key, const std::string& value) {
    BackendOptions o = good;
    o[key] = value;
    return o;
  };
  const std::string small = refusal(with("part_size", "5242879"));
  EXPECT_TRUE(contains(small, "`backend.s3.part_size`") && contains(small, "5242880")) << small;
  EXPECT_TRUE(contains(refusal({{"bucket", "ckpt"}}), "`backend.s3.endpoint` is required"));
  EXPECT_TRUE(contains(refusal({{"endpoint", "http://h"}}), "`backend.s3.bucket` is required"));
  const std::string scheme = refusal(with("endpoint", "ftp://h"));
  EXPECT_TRUE(contains(scheme, "not an http:// or https:// URL")) << scheme;
  const std::string ca = refusal(with("ca_file", "/no/such/ca.pem"));
  EXPECT_TRUE(contains(ca, "`backend.s3.ca_file`")) << ca;
  const std::string choice = refusal(with("endpoint_choice", "random"));
  EXPECT_TRUE(contains(choice, "backend.s3.endpoint_choice") && contains(choice, "least_loaded"))
      << choice;
  const std::string threads = [&] {
    try {
      make_backend("s3", IoSettings{.threads = 2}, good);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  }();
  EXPECT_TRUE(contains(threads, "backend.s3.concurrency")) << threads;
}

TEST(S3Config, CredentialsComeOnlyFromTheEnvironment) {
  const char* saved = std::getenv("AWS_ACCESS_KEY_ID");
  const std::string kept = saved == nullptr ? "" : saved;
  ::unsetenv("AWS_ACCESS_KEY_ID");
  const std::string message = refusal({{"endpoint", "http://127.0.0.1:1"}, {"bucket", "ckpt"}});
  if (saved != nullptr) ::setenv("AWS_ACCESS_KEY_ID", kept.c_str(), 1);
  EXPECT_TRUE(contains(message, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")) << message;
  EXPECT_TRUE(contains(refusal({{"access_key", "x"}}), "unknown option `backend.s3.access_key`"));
}

}  // namespace
}  // namespace ckpt::backends::s3
