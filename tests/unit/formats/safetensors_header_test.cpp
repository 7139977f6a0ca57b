// The safetensors header: the bytes the writer produces, and every bad file the reader refuses,
// each error naming the file and the field.
#include "harness/formats/safetensors_header.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

std::vector<SafetensorsTensor> three_tensors() {
  return {{"a.weight", "BF16", {2, 3}, 0, 12},
          {"b.bias", "F32", {3}, 12, 24},
          {"c.scale", "F8_E4M3", {5}, 24, 29}};
}

std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span(s));
}

// A file: the header and `data` bytes of tensor data.
std::string file_with(const std::string& header, std::size_t data) {
  return header + std::string(data, 'x');
}

// The header bytes of raw JSON text (the length word, then the text).
std::string raw_header(const std::string& json) {
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i)
    length[static_cast<std::size_t>(i)] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return length + json;
}

// The message parse_safetensors_header throws for `file` (the whole file given).
std::string error_of(const std::string& file, std::uint64_t file_size) {
  try {
    parse_safetensors_header(bytes_of(file), file_size, "w.safetensors");
  } catch (const SafetensorsError& e) {
    return e.what();
  }
  return "(no error)";
}
std::string error_of(const std::string& file) {
  return error_of(file, file.size());
}

TEST(SafetensorsHeader, RoundTripsTensorsAndMetadataWithThePaddedLengthWord) {
  const std::string header =
      encode_safetensors_header(three_tensors(), {{"format", "pt"}, {"model", "tiny"}});
  ASSERT_EQ(header.size() % 8, 0u);
  std::uint64_t n = 0;
  std::memcpy(&n, header.data(), 8);  // little-endian host
  EXPECT_EQ(n, header.size() - 8);
  EXPECT_EQ(header.substr(8, 15), "{\"__metadata__\"");
  EXPECT_NE(header.back(), '\0');
  const std::string file = file_with(header, 29);
  const SafetensorsHeader parsed =
      parse_safetensors_header(bytes_of(file), file.size(), "w.safetensors");
  EXPECT_EQ(parsed.header_bytes, header.size());
  ASSERT_EQ(parsed.tensors.size(), 3u);
  const auto expected = three_tensors();
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(parsed.tensors[i].name, expected[i].name);
    EXPECT_EQ(parsed.tensors[i].dtype, expected[i].dtype);
    EXPECT_EQ(parsed.tensors[i].shape, expected[i].shape);
    EXPECT_EQ(parsed.tensors[i].begin, expected[i].begin);
    EXPECT_EQ(parsed.tensors[i].end, expected[i].end);
  }
  EXPECT_EQ(parsed.metadata.at("model"), "tiny");
  EXPECT_EQ(parsed.metadata.at("format"), "pt");
}

TEST(SafetensorsHeader, DtypeNamesOfTheProjectsDtypes) {
  EXPECT_EQ(safetensors_dtype(workloads::Dtype::bf16), "BF16");
  EXPECT_EQ(safetensors_dtype(workloads::Dtype::fp16), "F16");
  EXPECT_EQ(safetensors_dtype(workloads::Dtype::fp32), "F32");
  EXPECT_EQ(safetensors_dtype(workloads::Dtype::fp64), "F64");
  EXPECT_EQ(safetensors_dtype(workloads::Dtype::fp8), "F8_E4M3");
  EXPECT_EQ(safetensors_dtype_bytes("I64"), 8u);
  EXPECT_EQ(safetensors_dtype_bytes("F8_E5M2"), 1u);
  EXPECT_FALSE(safetensors_dtype_bytes("bf16").has_value());
}

// safetensors 0.8's save_file of nine one-element tensors stored them in this order: by dtype,
// greatest first in its Dtype enum, then by name.
TEST(SafetensorsHeader, StoresTensorsInThePackagesOrder) {
  const std::vector<std::pair<std::string, std::string>> stored{
      {"z", "I64"}, {"a", "F64"},     {"x", "F32"}, {"c", "I32"}, {"y", "BF16"},
      {"b", "F16"}, {"w", "F8_E4M3"}, {"d", "I8"},  {"B", "BOOL"}};
  for (std::size_t i = 0; i < stored.size(); ++i) {
    for (std::size_t j = 0; j < stored.size(); ++j) {
      const SafetensorsTensor a{stored[i].first, stored[i].second};
      const SafetensorsTensor b{stored[j].first, stored[j].second};
      EXPECT_EQ(safetensors_stored_before(a, b), i < j) << a.name << " " << b.name;
    }
  }
  // One dtype: bytewise by name ("lm_head" before "model.", "layers.10" before "layers.2").
  EXPECT_TRUE(safetensors_stored_before({"lm_head.weight", "BF16"}, {"model.norm.weight", "BF16"}));
  EXPECT_TRUE(
      safetensors_stored_before({"model.layers.10.a", "BF16"}, {"model.layers.2.a", "BF16"}));
}

TEST(SafetensorsHeader, ReadsTheHeaderOfAFile) {
  const test_support::TempDir dir;
  const std::string header = encode_safetensors_header(three_tensors(), {});
  const auto path = dir.write("m.safetensors", file_with(header, 29));
  const SafetensorsHeader parsed = read_safetensors_header(path);
  EXPECT_EQ(parsed.tensors.size(), 3u);
  EXPECT_TRUE(parsed.metadata.empty());
  try {
    read_safetensors_header(dir.path() / "missing.safetensors");
    FAIL() << "no error for a missing file";
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.safetensors: file: cannot be opened"),
              std::string::npos)
        << e.what();
  }
}

// Through a reader (an object store's ranged GETs): the length word, then the rest of the header,
// and not one byte of the data; a source that returns fewer bytes than the size promises is named.
TEST(SafetensorsHeader, ReadsTheHeaderThroughAByteReaderInTwoReads) {
  const std::string header = encode_safetensors_header(three_tensors(), {});
  const std::string file = file_with(header, 29);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reads;
  const auto read = [&](std::uint64_t offset, std::uint64_t length) {
    reads.emplace_back(offset, length);
    return file.substr(offset, length);
  };
  const SafetensorsHeader parsed = read_safetensors_header(file.size(), read, "s3://b/m");
  EXPECT_EQ(parsed.tensors.size(), 3u);
  EXPECT_EQ(parsed.header_bytes, header.size());
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected{{0, 8},
                                                                      {8, header.size() - 8}};
  EXPECT_EQ(reads, expected);
  const auto short_read = [&](std::uint64_t offset, std::uint64_t length) {
    return file.substr(offset, offset == 0 ? length : length - 1);
  };
  try {
    read_safetensors_header(file.size(), short_read, "s3://b/m");
    FAIL() << "no error for a short read";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s3://b/m: header: read failed before its end", 0), 0u)
        << e.what();
  }
}

// Each bad file: the message starts with the file and names the field.
void expect_error(const std::string& message, const std::string& field,
                  const std::string& problem) {
  EXPECT_EQ(message.rfind("w.safetensors: ", 0), 0u) << message;
  EXPECT_NE(message.find(field), std::string::npos) << message;
  EXPECT_NE(message.find(problem), std::string::npos) << message;
}

TEST(SafetensorsHeader, RefusesATruncatedHeader) {
  expect_error(error_of("abc"), "header length", "truncated: the file has 3 bytes");
  const std::string header = encode_safetensors_header(three_tensors(), {});
  // Only a prefix of the header is at hand, though the file is long enough.
  const std::string prefix = header.substr(0, 20);
  try {
    parse_safetensors_header(bytes_of(prefix), header.size() + 29, "w.safetensors");
    FAIL();
  } catch (const SafetensorsError& e) {
    expect_error(e.what(), "header", "truncated: 12 of its");
  }
}

TEST(SafetensorsHeader, RefusesAHeaderLengthBeyondTheFileOrOverTheLimit) {
  const std::string header = encode_safetensors_header(three_tensors(), {});
  expect_error(error_of(header.substr(0, header.size() - 8)), "header length",
               "runs beyond the end of the file");
  std::string huge(8, '\0');
  const std::uint64_t n = kSafetensorsMaxHeaderBytes + 1;
  std::memcpy(huge.data(), &n, 8);
  expect_error(error_of(huge, 1ull << 40), "header length",
               "100000001 bytes is over the 100000000-byte limit");
}

TEST(SafetensorsHeader, RefusesBadJson) {
  expect_error(error_of(raw_header("{\"a\": [1,")), "header JSON", "parse error");
  expect_error(error_of(raw_header("[1, 2]")), "header JSON",
               "expected an object of tensors, found array");
  expect_error(error_of(raw_header(R"({"__metadata__": {"k": 1}})")), "\"__metadata__\".\"k\"",
               "expected a string");
  expect_error(error_of(raw_header(R"({"t": {"dtype": "F32", "shape": [1]}})")),
               "tensor \"t\" field \"data_offsets\"", "missing");
  expect_error(
      error_of(raw_header(R"({"t": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})")),
      "tensor \"t\" field \"shape\"", "non-negative integer");
}

TEST(SafetensorsHeader, RefusesAnUnknownDtype) {
  const std::string header = encode_safetensors_header({{"t", "BF17", {2}, 0, 4}}, {});
  expect_error(error_of(file_with(header, 4)), "tensor \"t\" field \"dtype\"",
               "unknown dtype \"BF17\" (known: BOOL");
}

TEST(SafetensorsHeader, RefusesOffsetsOutOfRangeOverlappingWithGapsOrNotMatchingTheShape) {
  const std::string header = encode_safetensors_header(three_tensors(), {});
  expect_error(error_of(file_with(header, 28)), "tensor \"c.scale\" field \"data_offsets\"",
               "[24, 29] is out of range: the file holds 28 data bytes");
  expect_error(error_of(file_with(header, 30)), "data_offsets",
               "the tensors end at data byte 29, but the file holds 30");
  const std::string overlapping =
      encode_safetensors_header({{"a", "F32", {2}, 0, 8}, {"b", "F32", {1}, 4, 8}}, {});
  expect_error(error_of(file_with(overlapping, 8)), "tensor \"b\" field \"data_offsets\"",
               "overlaps tensor \"a\"");
  const std::string gap =
      encode_safetensors_header({{"a", "F32", {1}, 0, 4}, {"b", "F32", {1}, 8, 12}}, {});
  expect_error(error_of(file_with(gap, 12)), "tensor \"b\" field \"data_offsets\"",
               "leaves a gap of 4 bytes");
  const std::string mismatch = encode_safetensors_header({{"a", "BF16", {3, 2}, 0, 8}}, {});
  expect_error(error_of(file_with(mismatch, 8)), "tensor \"a\" field \"data_offsets\"",
               "[0, 8] holds 8 bytes, but dtype BF16 x shape [3,2] is 12 bytes");
  const std::string backwards = encode_safetensors_header({{"a", "U8", {0}, 4, 0}}, {});
  expect_error(error_of(file_with(backwards, 4)), "tensor \"a\" field \"data_offsets\"",
               "end 0 is before begin 4");
}

}  // namespace
}  // namespace ckpt::harness
