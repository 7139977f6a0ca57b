#include "harness/campaign/campaign_schema.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "backends/registry.hpp"
#include "harness/campaign/case.hpp"
#include "harness/common/config_error.hpp"
#include "harness/common/config_text.hpp"
#include "harness/common/suggest.hpp"
#include "harness/load/weight_loader.hpp"
#include "workloads/dtype.hpp"
#include "workloads/limits.hpp"

namespace ckpt::harness::schema {
namespace {

constexpr std::int64_t kIntMax = INT_MAX;  // keys stored in an int
constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();

KeySpec required_text(std::string_view table, std::string_view key) {
  return KeySpec{.table = table, .key = key, .kind = Kind::text, .required = true};
}
KeySpec text_key(std::string_view table, std::string_view key, const char* fallback) {
  return KeySpec{.table = table, .key = key, .kind = Kind::text, .fallback = std::string(fallback)};
}
KeySpec bool_key(std::string_view table, std::string_view key, bool fallback) {
  return KeySpec{.table = table, .key = key, .kind = Kind::boolean, .fallback = fallback};
}
KeySpec int_key(std::string_view table, std::string_view key, std::int64_t fallback,
                std::int64_t min, std::int64_t max = kNoMax) {
  return KeySpec{.table = table,
                 .key = key,
                 .kind = Kind::integer,
                 .fallback = fallback,
                 .min = min,
                 .max = max};
}
KeySpec size_key(std::string_view table, std::string_view key, std::int64_t fallback,
                 std::int64_t min = 0) {
  return KeySpec{.table = table, .key = key, .kind = Kind::size, .fallback = fallback, .min = min};
}
// `fallback` nullptr: unset by default.
KeySpec choice_key(std::string_view table, std::string_view key, const char* fallback,
                   std::vector<std::string_view> choices) {
  return KeySpec{.table = table,
                 .key = key,
                 .kind = Kind::choice,
                 .fallback = fallback ? Value{std::string(fallback)} : Value{},
                 .choices = std::move(choices)};
}
KeySpec dtype_key(std::string_view table, std::string_view key, const char* fallback,
                  Kind kind = Kind::dtype) {
  return KeySpec{.table = table, .key = key, .kind = kind, .fallback = std::string(fallback)};
}
KeySpec number_key(std::string_view table, std::string_view key, double fallback, std::int64_t min,
                   std::int64_t max = kNoMax) {
  return KeySpec{.table = table, .key = key, .kind = Kind::number, .fallback = fallback, .min = min, .max = max};
}
KeySpec fixed(KeySpec spec) {
  spec.sweepable = false;
  return spec;
}

std::vector<KeySpec> general_keys();

// The backends' own tables, from their option tables (backends/<name>/): the registry's
// listing, these keys and the backends' parsing share that one declaration.
struct BackendSchema {
  std::vector<backends::BackendInfo> infos;
  std::vector<std::string> tables;  // "backend.<name>" of every backend with options
  std::vector<std::string_view> table_views;
};

const BackendSchema& backend_schema() {
  static const BackendSchema schema = [] {
    BackendSchema built;
    built.infos = backends::list_backends();
    for (const backends::BackendInfo& info : built.infos) {
      if (!info.options.empty()) built.tables.push_back("backend." + info.name);
    }
    built.table_views.assign(built.tables.begin(), built.tables.end());
    return built;
  }();
  return schema;
}

std::int64_t default_integer(std::string_view table, const backends::OptionSpec& option) {
  std::int64_t value = 0;
  const std::string& text = option.default_value;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::logic_error(std::string(table) + "." + option.name + ": default \"" + text + "\" is no integer");
  }
  return value;
}

KeySpec backend_key(std::string_view table, const backends::OptionSpec& option) {
  using backends::OptionType;
  const std::string_view key = option.name;
  switch (option.type) {
    case OptionType::boolean:
      return bool_key(table, key, option.default_value == "true");
    case OptionType::integer:
      return int_key(table, key, default_integer(table, option), option.min, option.max);
    case OptionType::size: {
      KeySpec spec = size_key(table, key, default_integer(table, option), option.min);
      spec.max = option.max;
      return spec;
    }
    case OptionType::choice:
      return choice_key(table, key, option.default_value.c_str(),
                        std::vector<std::string_view>(option.choices.begin(), option.choices.end()));
    case OptionType::text:
      return text_key(table, key, option.default_value.c_str());
    case OptionType::string_map:
      return fixed(KeySpec{.table = table, .key = key, .kind = Kind::string_map, .fallback = nlohmann::json::object()});
  }
  throw std::logic_error("backend option of an unknown type");
}

std::vector<KeySpec> build_keys() {
  std::vector<KeySpec> keys = general_keys();
  const BackendSchema& schema = backend_schema();
  std::size_t table = 0;
  for (const backends::BackendInfo& info : schema.infos) {
    if (info.options.empty()) continue;
    for (const backends::OptionSpec& option : info.options) keys.push_back(backend_key(schema.table_views[table], option));
    ++table;
  }
  return keys;
}

std::vector<KeySpec> general_keys() {
  return {
      fixed(required_text("campaign", "name")),
      fixed(required_text("campaign", "target")),
      fixed(bool_key("campaign", "create_target", false)),
      fixed(bool_key("campaign", "overwrite", false)),
      fixed(bool_key("campaign", "keep", false)),
      int_key("campaign", "iterations", 3, 1, kIntMax),
      int_key("campaign", "warmup", 1, 0, kIntMax),
      fixed(choice_key("campaign", "phase", "both", {"both", "checkpoint", "restore", "load"})),
      fixed(size_key("campaign", "memory_budget", 0)),
      fixed(choice_key("campaign", "mpi_io", "default", {"default", "romio", "ompio"})),
      required_text("model", "name"),
      int_key("model", "scale", 1, 1),
      // exact: what the frameworks save; dlio: DLIO's (MLPerf Storage's) size formula.
      choice_key("model", "sizing", "exact", {"exact", "dlio"}),
      // The parallel sizes must be positive here; whether they suit the model is Layout's call.
      int_key("parallel", "tp", 1, 1),
      int_key("parallel", "pp", 1, 1),
      int_key("parallel", "dp", 1, 1),
      int_key("parallel", "ep", 1, 1),
      int_key("parallel", "zero", 0, 0, kIntMax),
      int_key("parallel", "vocab_divisor", 128, 1),
      int_key("parallel", "pp_first_stage_layers", 0, 0),
      int_key("parallel", "pp_last_stage_layers", 0, 0),
      choice_key("state", "scope", "full", {"full", "weights"}),
      choice_key("state", "naming", nullptr, {"megatron", "hf"}),
      dtype_key("state", "weight_dtype", "bf16"),
      dtype_key("state", "master_dtype", "fp32", Kind::dtype_or_none),
      dtype_key("state", "optimizer_dtype", "fp32"),
      choice_key("ranks", "select", "all", {"all", "list", "node"}),
      fixed(KeySpec{.table = "ranks",
                    .key = "list",
                    .kind = Kind::rank_list,
                    .fallback = std::vector<std::int64_t>{}}),
      // Bounded by the largest world, so that node × gpus_per_node cannot overflow.
      int_key("ranks", "node", 0, 0, workloads::limits::kWorldSize - 1),
      int_key("ranks", "gpus_per_node", 8, 1, workloads::limits::kWorldSize),
      choice_key("strategy", "mapping", "file_per_rank",
                 {"file_per_rank", "file_per_tensor", "file_per_node", "shared_file"}),
      choice_key("strategy", "layout", "dcp", {"dcp", "megatron", "deepspeed", "megatron_dist"}),
      choice_key("strategy", "megatron_optimizer", "gathered", {"gathered", "per_dp"}),
      int_key("strategy", "writer_threads", 2, 1, 64),
      size_key("strategy", "alignment", 0),
      size_key("strategy", "chunk_bytes", 0),
      size_key("strategy", "coalesce_bytes", 0),
      choice_key("strategy", "format", "raw", {"raw", "safetensors"}),
      // Hugging Face's default max_shard_size ("5GB").
      size_key("strategy", "max_shard_bytes", 5'000'000'000, 1),
      text_key("backend", "name", "posix"),
      bool_key("backend", "direct", false),
      choice_key("backend", "sync", "fsync", {"none", "fsync", "fdatasync"}),
      bool_key("backend", "fallocate", false),
      int_key("backend", "threads", 1, 1, kIntMax),
      int_key("backend", "queue_depth", 1, 1, kIntMax),
      bool_key("backend", "sqpoll", false),
      size_key("backend", "direct_alignment", 4096, 1),
      choice_key("data", "pattern", "random", {"random", "zeros", "bf16"}),
      int_key("data", "seed", 1, 0),
      bool_key("data", "verify", true),
      choice_key("memory", "space", "host", {"host", "pinned", "cuda", "kokkos"}),
      size_key("memory", "staging_bytes", std::int64_t{64} << 20, 4096),
      int_key("memory", "staging_buffers", 2, 1, 64),
      // 0: each process holds its whole share (a checkpoint is distinct data); > 0: fio's and
      // IOR's footprint, one buffer of this many bytes that every request reuses.
      size_key("memory", "reuse_bytes", 0),
      choice_key("cache", "policy", "drop", {"drop", "fadvise", "read_shift", "none"}),
      // [training] and [engine] (harness/engine): training.iterations = 0 keeps the loop off.
      int_key("training", "iterations", 0, 0, kIntMax),
      number_key("training", "iteration_seconds", 1.0, 0, 3600),
      number_key("training", "update_fraction", 0.2, 0, 1),
      int_key("training", "checkpoint_every", 1, 1, kIntMax),
      choice_key("training", "compute", "sleep", {"sleep", "spin", "gpu"}),
      choice_key("engine", "name", "sync", {"sync", "async", "lazy"}),
      size_key("engine", "host_pool_bytes", 0),
      // [restore] (harness/reshard): 0, -1 or no value keep the writer's parallel.*, state.scope
      // and ranks.* — a plain restore of the writer's layout.
      int_key("restore", "tp", 0, 0),
      int_key("restore", "pp", 0, 0),
      int_key("restore", "dp", 0, 0),
      int_key("restore", "ep", 0, 0),
      int_key("restore", "zero", -1, -1, kIntMax),
      choice_key("restore", "state", nullptr, {"full", "weights"}),
      choice_key("restore", "select", nullptr, {"all", "list", "node"}),
      fixed(KeySpec{.table = "restore",
                    .key = "list",
                    .kind = Kind::rank_list,
                    .fallback = std::vector<std::int64_t>{}}),
      int_key("restore", "node", 0, 0),
      choice_key("restore", "read", "exact", {"exact", "whole_items"}),
      size_key("restore", "gap_bytes", 0),
      // [load] (the load phase, harness/run/case_load.cpp): defaults from LoadSettings and
      // kLoadGapBytes, as `ckptbench load`'s; load.tp = 0 loads into the checkpoint's parallel.tp.
      choice_key("load", "method", load_method_name(LoadSettings{}.method).data(), {load_method_name(LoadMethod::pipelined), load_method_name(LoadMethod::mmap),
                  load_method_name(LoadMethod::read)}),
      int_key("load", "threads", LoadSettings{}.threads, 1, kMaxLoadThreads),
      bool_key("load", "direct", LoadSettings{}.direct),
      size_key("load", "chunk_bytes", static_cast<std::int64_t>(LoadSettings{}.chunk_bytes), 4096),
      size_key("load", "pool_bytes", static_cast<std::int64_t>(LoadSettings{}.pool_bytes), 4096),
      int_key("load", "tp", 0, 0),
      size_key("load", "gap_bytes", static_cast<std::int64_t>(kLoadGapBytes)),
      // [measure] calibration: a plain write and read of each case's bytes before each iteration (ckptbench gate).
      fixed(bool_key("measure", "calibration", false)),
      // [measure]: per-request latency histograms (posix, uring); off so bandwidth runs pay nothing.
      bool_key("measure", "latency", false),
  };
}

constexpr std::array<std::string_view, 15> kTables{"campaign", "model",  "parallel", "state",    "ranks",
                                                   "strategy", "backend", "data",    "memory",   "cache",
                                                   "training", "engine",  "restore", "load",     "measure"};

std::string quoted_list(const std::vector<std::string_view>& choices) {
  std::string listed;
  for (const std::string_view choice : choices) {
    listed += (listed.empty() ? "\"" : ", \"") + std::string(choice) + "\"";
  }
  return listed;
}

void check_range(const KeySpec& spec, std::int64_t value, const Where& where) {
  if (value < spec.min) {
    where.fail("must be at least " + std::to_string(spec.min) + " (got " + std::to_string(value) +
               ")");
  }
  if (value > spec.max) {
    where.fail("must be at most " + std::to_string(spec.max) + " (got " + std::to_string(value) +
               ")");
  }
}

[[noreturn]] void wrong_type(const KeySpec& spec, const toml::node& node, const Where& where) {
  where.fail("expected " + expected(spec) + ", found " + describe_toml_type(node.type()));
}

const std::string& string_of(const KeySpec& spec, const toml::node& node, const Where& where) {
  if (!node.is_string()) wrong_type(spec, node, where);
  return node.as_string()->get();
}

Value convert_choice(const KeySpec& spec, const std::string& value, const Where& where) {
  if (std::find(spec.choices.begin(), spec.choices.end(), value) != spec.choices.end())
    return value;
  where.fail("unknown value \"" + value + "\", expected one of " + quoted_list(spec.choices) +
             did_you_mean(value, spec.choices));
}

Value convert_dtype(const KeySpec& spec, const std::string& value, const Where& where) {
  if (spec.kind == Kind::dtype_or_none && value == "none") return value;
  try {
    workloads::parse_dtype(value);
  } catch (const std::invalid_argument& e) {
    where.fail(std::string(e.what()) + (spec.kind == Kind::dtype_or_none ? " or none" : ""));
  }
  return value;
}

Value convert_rank_list(const KeySpec& spec, const toml::node& node, const Where& where) {
  if (!node.is_array()) wrong_type(spec, node, where);
  std::vector<std::int64_t> ranks;
  for (const toml::node& element : *node.as_array()) {
    if (!element.is_integer()) {
      where.fail(
          "expected " + expected(spec) + ", found " + describe_toml_type(element.type()) + " at position " +
          std::to_string(ranks.size() + 1) +
          (element.is_array() ? " (ranks.list is one list of ranks and cannot be swept)" : ""));
    }
    ranks.push_back(element.as_integer()->get());
  }
  // More entries than the largest world cannot all be distinct ranks of it.
  if (static_cast<std::int64_t>(ranks.size()) > workloads::limits::kWorldSize) {
    where.fail(std::to_string(ranks.size()) + " ranks listed; at most " +
               std::to_string(workloads::limits::kWorldSize) + " (the largest world, tp × pp × dp)");
  }
  return ranks;
}

std::string shortest(double value) {
  std::array<char, 32> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  return std::string(text.data(), end);
}

Value convert_number(const KeySpec& spec, const toml::node& node, const Where& where) {
  double value = 0;
  if (node.is_floating_point()) {
    value = node.as_floating_point()->get();
  } else if (node.is_integer()) {
    value = static_cast<double>(node.as_integer()->get());
  } else {
    wrong_type(spec, node, where);
  }
  if (!(value >= static_cast<double>(spec.min)) || value > static_cast<double>(spec.max)) {
    where.fail("must be in [" + std::to_string(spec.min) + ", " + std::to_string(spec.max) + "] (got " +
               shortest(value) + ")");
  }
  return value;
}

Value convert_string_map(const KeySpec& spec, const toml::node& node, const Where& where) {
  if (!node.is_table()) wrong_type(spec, node, where);
  nlohmann::json map = nlohmann::json::object();
  for (const auto& [key, value] : *node.as_table()) {
    if (value.is_string()) {
      map[std::string(key.str())] = value.as_string()->get();
    } else if (value.is_integer()) {
      map[std::string(key.str())] = std::to_string(value.as_integer()->get());
    } else {
      where.fail("value of `" + std::string(key.str()) + "`: expected a string or an integer, found " +
                 describe_toml_type(value.type()));
    }
  }
  return map;
}

Value convert_size(const KeySpec& spec, const toml::node& node, const Where& where) {
  std::int64_t bytes = 0;
  if (node.is_integer()) {
    bytes = node.as_integer()->get();
    if (bytes < 0) where.fail("a size must not be negative (got " + std::to_string(bytes) + ")");
  } else if (node.is_string()) {
    bytes = parse_size(node.as_string()->get(), where);
  } else {
    wrong_type(spec, node, where);
  }
  check_range(spec, bytes, where);
  return bytes;
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// Bytes per unit; 0 when `unit` is not one.
std::int64_t unit_bytes(std::string_view unit) {
  constexpr std::array<std::pair<std::string_view, std::int64_t>, 10> kUnits{{
      {"", 1},
      {"B", 1},
      {"KiB", std::int64_t{1} << 10},
      {"MiB", std::int64_t{1} << 20},
      {"GiB", std::int64_t{1} << 30},
      {"TiB", std::int64_t{1} << 40},
      {"KB", 1'000},
      {"MB", 1'000'000},
      {"GB", 1'000'000'000},
      {"TB", 1'000'000'000'000},
  }};
  for (const auto& [name, bytes] : kUnits) {
    if (name == unit) return bytes;
  }
  return 0;
}

// 10^digits for digits <= 18.
std::int64_t power_of_ten(std::size_t digits) {
  std::int64_t p = 1;
  for (std::size_t i = 0; i < digits; ++i) p *= 10;
  return p;
}

}  // namespace

std::span<const KeySpec> keys() {
  static const std::vector<KeySpec> kKeys = build_keys();
  return kKeys;
}

std::span<const std::string_view> tables() {
  return kTables;
}

std::span<const std::string_view> backend_tables() { return backend_schema().table_views; }

bool is_table(std::string_view table) {
  return std::find(kTables.begin(), kTables.end(), table) != kTables.end() ||
         std::find(backend_tables().begin(), backend_tables().end(), table) != backend_tables().end();
}

const KeySpec* find(std::string_view table, std::string_view key) {
  for (const KeySpec& spec : keys()) {
    if (spec.table == table && spec.key == key) return &spec;
  }
  return nullptr;
}

std::size_t index_of(const KeySpec& spec) {
  return static_cast<std::size_t>(&spec - keys().data());
}

std::size_t index_of(std::string_view dotted) {
  for (const KeySpec& spec : keys()) {
    if (spec.dotted() == dotted) return index_of(spec);
  }
  throw std::logic_error("campaign schema has no key " + std::string(dotted));
}

std::vector<std::string_view> keys_of(std::string_view table) {
  std::vector<std::string_view> names;
  for (const KeySpec& spec : keys()) {
    if (spec.table == table) names.push_back(spec.key);
  }
  return names;
}

void Where::fail(const std::string& problem) const {
  throw ConfigError(source, line, key, problem + context);
}

Value convert(const KeySpec& spec, const toml::node& node, const Where& where) {
  switch (spec.kind) {
    case Kind::text: {
      const std::string& value = string_of(spec, node, where);
      if (value.empty()) where.fail("must not be empty");
      return value;
    }
    case Kind::boolean:
      if (!node.is_boolean()) wrong_type(spec, node, where);
      return node.as_boolean()->get();
    case Kind::integer: {
      if (!node.is_integer()) wrong_type(spec, node, where);
      const std::int64_t value = node.as_integer()->get();
      check_range(spec, value, where);
      return value;
    }
    case Kind::size:
      return convert_size(spec, node, where);
    case Kind::choice:
      return convert_choice(spec, string_of(spec, node, where), where);
    case Kind::dtype:
    case Kind::dtype_or_none:
      return convert_dtype(spec, string_of(spec, node, where), where);
    case Kind::rank_list:
      return convert_rank_list(spec, node, where);
    case Kind::string_map:
      return convert_string_map(spec, node, where);
    case Kind::number:
      return convert_number(spec, node, where);
  }
  throw std::logic_error("convert: unknown kind");
}

std::int64_t parse_size(std::string_view text, const Where& where) {
  const std::string shown = "\"" + std::string(text) + "\"";
  const std::string_view s = trim(text);
  if (!s.empty() && s.front() == '-') where.fail("a size must not be negative (got " + shown + ")");
  const std::size_t int_end = std::min(s.find_first_not_of("0123456789"), s.size());
  std::size_t number_end = int_end;
  std::string_view fraction;
  if (int_end < s.size() && s[int_end] == '.') {
    number_end = std::min(s.find_first_not_of("0123456789", int_end + 1), s.size());
    fraction = s.substr(int_end + 1, number_end - int_end - 1);
  }
  const std::int64_t unit = unit_bytes(trim(s.substr(number_end)));
  if (int_end == 0 || (number_end > int_end && fraction.empty()) || unit == 0) {
    where.fail(shown +
               " is not a size: expected a number and a unit, one of B, KiB, MiB, GiB, TiB "
               "(powers of 1024) or KB, MB, GB, TB (powers of 1000), e.g. \"4 MiB\"");
  }
  std::int64_t whole = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + int_end, whole);
  if (error != std::errc() || whole > std::numeric_limits<std::int64_t>::max() / unit) {
    where.fail(shown + " is too large (at most 8 EiB)");
  }
  fraction = fraction.substr(0, fraction.find_last_not_of('0') + 1);  // "1.50" == "1.5"
  std::int64_t part = 0;  // the fraction's bytes: fraction × unit, which must be whole
  if (!fraction.empty()) {
    const std::string_view not_whole = " is not a whole number of bytes";
    if (fraction.size() > 18) where.fail(shown + std::string(not_whole));
    std::int64_t numerator = 0;
    std::from_chars(fraction.data(), fraction.data() + fraction.size(), numerator);
    // numerator / 10^k × unit without overflow: cancel the common factor of unit and 10^k.
    const std::int64_t denominator = power_of_ten(fraction.size());
    const std::int64_t common = std::gcd(unit, denominator);
    if (numerator % (denominator / common) != 0) where.fail(shown + std::string(not_whole));
    part = numerator / (denominator / common) * (unit / common);
  }
  if (whole * unit > std::numeric_limits<std::int64_t>::max() - part) {
    where.fail(shown + " is too large (at most 8 EiB)");
  }
  return whole * unit + part;
}

std::string expected(const KeySpec& spec) {
  switch (spec.kind) {
    case Kind::text:
    case Kind::choice:
    case Kind::dtype:
    case Kind::dtype_or_none:
      return "a string";
    case Kind::boolean:
      return "a boolean";
    case Kind::integer:
      return "an integer";
    case Kind::size:
      return "a size (an integer number of bytes or a string such as \"4 MiB\")";
    case Kind::rank_list:
      return "an array of integers";
    case Kind::string_map:
      return "a table of strings (e.g. { romio_cb_write = \"enable\" })";
    case Kind::number:
      return "a number";
  }
  return "a value";
}

nlohmann::json to_json(const Value& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          return nullptr;
        } else {
          return v;
        }
      },
      value);
}

}  // namespace ckpt::harness::schema
