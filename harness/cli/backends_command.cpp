#include "harness/cli/backends_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "backends/registry.hpp"

namespace ckpt::harness {
namespace {

using backends::OptionSpec;
using backends::OptionType;

nlohmann::json capabilities_json(const backends::Capabilities& c) {
  return {{"direct_io", c.direct_io},
          {"device_memory", c.device_memory},
          {"shared_file", c.shared_file},
          {"collective", c.collective},
          {"threads", c.threads},
          {"fallocate", c.fallocate},
          {"sqpoll", c.sqpoll},
          {"max_queue_depth", c.max_queue_depth},
          {"stores_data", c.stores_data},
          {"raw_layout", c.raw_layout},
          {"background_thread", c.background_thread},
          {"request_latency", c.request_latency},
          {"mmap", c.mmap},
          {"object_store", c.object_store}};
}

bool has_range(const OptionSpec& o) {
  return o.type == OptionType::integer || o.type == OptionType::size;
}

nlohmann::json option_json(const OptionSpec& o) {
  nlohmann::json j{
      {"name", o.name}, {"type", backends::option_type_name(o.type)}, {"help", o.help}};
  if (o.type != OptionType::string_map) j["default"] = o.default_value;
  if (!o.choices.empty()) j["choices"] = o.choices;
  if (has_range(o)) {
    j["min"] = o.min;
    if (o.max != std::numeric_limits<std::int64_t>::max()) j["max"] = o.max;
  }
  return j;
}

// What the README's "Backend options" table says of one option: type, range or choices.
std::string accepts(const OptionSpec& o) {
  if (!o.choices.empty()) return fmt::format("{}", fmt::join(o.choices, ", "));
  if (has_range(o)) {
    const std::string unit = o.type == OptionType::size ? " bytes" : "";
    if (o.max == std::numeric_limits<std::int64_t>::max())
      return fmt::format("≥ {}{}", o.min, unit);
    return fmt::format("{}–{}{}", o.min, o.max, unit);
  }
  return std::string(backends::option_type_name(o.type));
}

void print_markdown(const std::vector<backends::BackendInfo>& list, std::ostream& out) {
  fmt::print(out, "| key | default | accepts | meaning |\n|---|---|---|---|\n");
  for (const backends::BackendInfo& b : list) {
    for (const OptionSpec& o : b.options) {
      const std::string shown = o.type == OptionType::string_map ? "{}" : o.default_value;
      fmt::print(out, "| `backend.{}.{}` | {} | {} | {} |\n", b.name, o.name, shown, accepts(o),
                 o.help);
    }
  }
}

}  // namespace

CLI::App* add_backends_command(CLI::App& app, BackendsOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("backends", "List the storage backends, their options and capabilities");
  CLI::Option* json = cmd->add_flag(
      "--json", o.json,
      "Print a JSON array (options with type, default, range or choices; capabilities)");
  cmd->add_flag("--markdown", o.markdown,
                "Print every backend option as the README's markdown table")
      ->excludes(json);
  return cmd;
}

void run_backends(const BackendsOptions& o, std::ostream& out) {
  const auto list = backends::list_backends();
  if (o.markdown) return print_markdown(list, out);
  if (o.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& b : list) {
      nlohmann::json entry{
          {"name", b.name}, {"available", b.available}, {"description", b.description}};
      if (!b.available) entry["reason"] = b.reason;
      entry["cmake_option"] = b.cmake_option;
      entry["needs_mpi"] = b.needs_mpi;
      entry["options"] = nlohmann::json::array();
      for (const OptionSpec& option : b.options) entry["options"].push_back(option_json(option));
      entry["capabilities"] = capabilities_json(b.capabilities);
      j.push_back(entry);
    }
    out << j.dump() << '\n';
    return;
  }
  fmt::print(out, "{:<9} {:<10} {}\n", "backend", "available", "description / reason");
  for (const auto& b : list) {
    fmt::print(out, "{:<9} {:<10} {}\n", b.name, b.available ? "yes" : "no",
               b.available ? b.description : b.reason + " (" + b.cmake_option + ")");
  }
}

}  // namespace ckpt::harness
