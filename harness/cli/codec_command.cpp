#include "harness/cli/codec_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/cli/choice_validator.hpp"
#include "harness/codec/codec.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/pattern_words.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using pattern::ContentFormat;
using pattern::ContentState;

// The generated inputs: data.pattern = "trained" for one state and format, or random bytes.
struct ContentKind {
  const char* name;
  DataPattern pattern;
  std::uint64_t code;  // the trained key's content bits
};

constexpr std::array kContents{
    ContentKind{"weight-bf16", DataPattern::trained,
                pattern::content_code(ContentState::weight, ContentFormat::bf16)},
    ContentKind{"master-fp32", DataPattern::trained,
                pattern::content_code(ContentState::master, ContentFormat::fp32)},
    ContentKind{"exp_avg-fp32", DataPattern::trained,
                pattern::content_code(ContentState::exp_avg, ContentFormat::fp32)},
    ContentKind{"exp_avg_sq-fp32", DataPattern::trained,
                pattern::content_code(ContentState::exp_avg_sq, ContentFormat::fp32)},
    ContentKind{"weight-fp32", DataPattern::trained,
                pattern::content_code(ContentState::weight, ContentFormat::fp32)},
    ContentKind{"exp_avg-bf16", DataPattern::trained,
                pattern::content_code(ContentState::exp_avg, ContentFormat::bf16)},
    ContentKind{"exp_avg_sq-bf16", DataPattern::trained,
                pattern::content_code(ContentState::exp_avg_sq, ContentFormat::bf16)},
    ContentKind{"random", DataPattern::random, 0},
};
constexpr std::size_t kDefaultContents = 4;  // the first four: a mixed-precision Adam checkpoint

constexpr std::array kCodecs{
    codec::CodecSettings{.codec = codec::Codec::zstd, .element_bytes = 1},
    codec::CodecSettings{.codec = codec::Codec::grouped, .element_bytes = 2},
    codec::CodecSettings{.codec = codec::Codec::grouped, .element_bytes = 4},
};

struct Input {
  std::string name;
  std::vector<std::byte> bytes;
};

std::vector<std::string> content_names() {
  std::vector<std::string> names;
  for (const ContentKind& k : kContents) names.emplace_back(k.name);
  return names;
}

std::vector<std::string> codec_names() {
  std::vector<std::string> names;
  for (const codec::CodecSettings& s : kCodecs) names.push_back(codec::codec_label(s));
  return names;
}

Input generated(const std::string& name, std::uint64_t bytes, std::uint64_t seed) {
  const auto kind = std::find_if(kContents.begin(), kContents.end(),
                                 [&](const ContentKind& k) { return name == k.name; });
  if (kind == kContents.end()) throw std::invalid_argument("--content " + name + ": unknown");
  Input in{name, std::vector<std::byte>(bytes)};
  const std::uint64_t key = pattern::with_content(pattern::splitmix64(seed), kind->code);
  fill_pattern(in.bytes.data(), bytes, kind->pattern, key);
  return in;
}

Input read_input(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw std::runtime_error(fmt::format("--file {}: {}", path, ec.message()));
  if (size == 0)
    throw std::runtime_error(fmt::format("--file {}: empty, nothing to compress", path));
  Input in{path, std::vector<std::byte>(size)};
  std::ifstream file(path, std::ios::binary);
  if (!file.read(reinterpret_cast<char*>(in.bytes.data()), static_cast<std::streamsize>(size)))
    throw std::runtime_error(fmt::format("--file {}: cannot read: {}", path, std::strerror(errno)));
  return in;
}

struct Measurement {
  std::uint64_t compressed = 0;
  std::vector<double> compress_seconds;
  std::vector<double> decompress_seconds;
};

// Every chunk compressed into one reused output buffer, then decoded into another, `repeat`
// times after one untimed round (first touch of the buffers and the codec's scratch memory).
Measurement measure(std::span<const std::byte> raw, const codec::CodecSettings& settings,
                    std::uint64_t chunk_bytes, int repeat) {
  codec::Encoder encoder(settings);
  codec::Decoder decoder;
  const std::size_t chunk = chunk_bytes == 0 ? raw.size() : static_cast<std::size_t>(chunk_bytes);
  std::vector<std::size_t> at{0};
  for (std::size_t off = 0; off < raw.size(); off += chunk)
    at.push_back(at.back() + encoder.frame_bound(std::min(chunk, raw.size() - off)));
  std::vector<std::byte> frames(at.back());
  std::vector<std::size_t> sizes(at.size() - 1);
  std::vector<std::byte> back(raw.size());
  auto piece = [&](std::size_t i) { return std::min(chunk, raw.size() - i * chunk); };
  auto encode_all = [&] {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      sizes[i] = encoder.encode(raw.subspan(i * chunk, piece(i)),
                                std::span(frames).subspan(at[i], at[i + 1] - at[i]));
    }
  };
  auto decode_all = [&] {
    for (std::size_t i = 0; i < sizes.size(); ++i)
      decoder.decode(std::span(frames).subspan(at[i], sizes[i]),
                     std::span(back).subspan(i * chunk, piece(i)));
  };
  Measurement m;
  for (int r = 0; r <= repeat; ++r) {
    const Clock::time_point c = Clock::now();
    encode_all();
    const double compress = seconds_since(c);
    std::fill(back.begin(), back.end(), std::byte{0});
    const Clock::time_point d = Clock::now();
    decode_all();
    const double decompress = seconds_since(d);
    if (!std::equal(back.begin(), back.end(), raw.begin()))
      throw std::runtime_error(codec::codec_label(settings) +
                               ": decoded bytes differ from the input");
    if (r == 0) continue;  // the untimed round
    m.compress_seconds.push_back(compress);
    m.decompress_seconds.push_back(decompress);
  }
  for (std::size_t s : sizes) m.compressed += s;
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

nlohmann::json row(const Input& in, const codec::CodecSettings& s, const CodecCommandOptions& o,
                   const Measurement& m) {
  const auto raw = static_cast<double>(in.bytes.size());
  return {{"input", in.name},
          {"bytes", in.bytes.size()},
          {"codec", codec::codec_label(s)},
          {"level", s.level},
          {"chunk_bytes", o.chunk_bytes},
          {"compressed_bytes", m.compressed},
          {"ratio", raw / static_cast<double>(m.compressed)},
          {"compress_gib_per_s", raw / median(m.compress_seconds) / kGiB},
          {"decompress_gib_per_s", raw / median(m.decompress_seconds) / kGiB},
          {"compress_seconds", m.compress_seconds},
          {"decompress_seconds", m.decompress_seconds}};
}

void print_row(std::ostream& out, const nlohmann::json& r) {
  const auto bytes = r.at("bytes").get<std::uint64_t>();
  const auto compressed = r.at("compressed_bytes").get<std::uint64_t>();
  fmt::print(out, "{:<24} {:>12} {:<13} {:>12} {:>6.3f} {:>6.1f}% {:>9.2f} {:>9.2f}\n",
             r.at("input").get<std::string>(), bytes, r.at("codec").get<std::string>(), compressed,
             r.at("ratio").get<double>(),
             100.0 * (1.0 - static_cast<double>(compressed) / static_cast<double>(bytes)),
             r.at("compress_gib_per_s").get<double>(), r.at("decompress_gib_per_s").get<double>());
}

std::vector<Input> inputs(const CodecCommandOptions& o) {
  std::vector<Input> in;
  for (const std::string& f : o.files) in.push_back(read_input(f));
  std::vector<std::string> names = o.contents;
  if (names.empty() && o.files.empty()) {
    for (std::size_t i = 0; i < kDefaultContents; ++i) names.emplace_back(kContents[i].name);
  }
  for (const std::string& n : names) in.push_back(generated(n, o.bytes, o.seed));
  return in;
}

int save_inputs(const CodecCommandOptions& o, const std::vector<Input>& in, std::ostream& out) {
  fs::create_directories(o.save);
  for (const Input& i : in) {
    const fs::path path = fs::path(o.save) / (i.name + ".bin");
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(i.bytes.data()),
               static_cast<std::streamsize>(i.bytes.size()));
    if (!file.flush())
      throw std::runtime_error(fmt::format("--save: {}: {}", path.string(), std::strerror(errno)));
    fmt::print(out, "{} ({} bytes)\n", path.string(), i.bytes.size());
  }
  return 0;
}

}  // namespace

CLI::App* add_codec_command(CLI::App& app, CodecCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "codec",
      "Compress and decompress files or generated checkpoint content with each built-in codec: "
      "ratio and speed, every decoded byte checked");
  CLI::Option* file = cmd->add_option("--file", o.files, "A file to compress (repeatable)");
  cmd->add_option("--content", o.contents,
                  "Generated input (repeatable): data.pattern = \"trained\" as one state and "
                  "format, or random bytes. Default without --file: weight-bf16, master-fp32, "
                  "exp_avg-fp32, exp_avg_sq-fp32")
      ->check(one_of(content_names()));
  cmd->add_option("--codec", o.codecs,
                  "zstd (the bytes as stored), grouped-bf16 or grouped-fp32 (exponent bytes apart "
                  "from sign and mantissa bytes, each plane zstd-compressed); repeatable, default "
                  "all")
      ->check(one_of(codec_names()));
  cmd->add_option("--bytes", o.bytes, "Bytes of each generated input (e.g. 64MiB)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--chunk-bytes", o.chunk_bytes,
                  "Compress each chunk of this many bytes as one frame (0: the whole input)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  cmd->add_option("--level", o.level, "zstd compression level")
      ->check(CLI::Range(1, 22))
      ->capture_default_str();
  cmd->add_option("--repeat", o.repeat, "Timed runs per codec and input (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the generated inputs")->capture_default_str();
  cmd->add_option("--save", o.save,
                  "Write the generated inputs as DIR/NAME.bin instead of measuring (for other "
                  "tools, e.g. benchmarks/vs_zstd.sh)")
      ->excludes(file);
  cmd->add_flag("--json", o.json, "Print a JSON array, one object per input and codec");
  return cmd;
}

int run_codec(const CodecCommandOptions& o, std::ostream& out) {
  const std::vector<Input> in = inputs(o);
  if (!o.save.empty()) return save_inputs(o, in, out);
  std::vector<codec::CodecSettings> codecs;
  for (codec::CodecSettings s : kCodecs) {
    s.level = o.level;
    if (o.codecs.empty() || std::count(o.codecs.begin(), o.codecs.end(), codec::codec_label(s)))
      codecs.push_back(s);
  }
  nlohmann::json rows = nlohmann::json::array();
  if (!o.json) {
    fmt::print(out, "{:<24} {:>12} {:<13} {:>12} {:>6} {:>7} {:>9} {:>9}\n", "input", "bytes",
               "codec", "compressed", "ratio", "saved", "comp", "decomp");
  }
  for (const Input& i : in) {
    for (const codec::CodecSettings& s : codecs) {
      rows.push_back(row(i, s, o, measure(i.bytes, s, o.chunk_bytes, o.repeat)));
      if (!o.json) print_row(out, rows.back());
    }
  }
  if (o.json) {
    out << rows.dump(2) << '\n';
  } else {
    fmt::print(out,
               "ratio = bytes / compressed (frames included); comp, decomp: GiB/s of input bytes, "
               "median of {} runs, one thread, zstd level {}, {}; every decoded byte checked\n",
               o.repeat, o.level,
               o.chunk_bytes == 0 ? std::string("one frame per input")
                                  : fmt::format("one frame per {} bytes", o.chunk_bytes));
  }
  return 0;
}

}  // namespace ckpt::harness
