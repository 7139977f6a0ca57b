#include "harness/cli/backends_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "backends/registry.hpp"

namespace ckpt::harness {

CLI::App* add_backends_command(CLI::App& app, BackendsOptions& o) {
  CLI::App* cmd = app.add_subcommand("backends", "List the storage backends and whether this build has them");
  cmd->add_flag("--json", o.json, "Print a JSON array");
  return cmd;
}

void run_backends(const BackendsOptions& o, std::ostream& out) {
  const auto list = backends::list_backends();
  if (o.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& b : list) {
      nlohmann::json entry{{"name", b.name}, {"available", b.available}, {"description", b.description}};
      if (!b.available) entry["reason"] = b.reason;
      entry["cmake_option"] = b.cmake_option;
      j.push_back(entry);
    }
    out << j.dump() << '\n';
    return;
  }
  fmt::print(out, "{:<8} {:<10} {}\n", "backend", "available", "description / reason");
  for (const auto& b : list) {
    fmt::print(out, "{:<8} {:<10} {}\n", b.name, b.available ? "yes" : "no",
               b.available ? b.description : b.reason + " (" + b.cmake_option + ")");
  }
}

}  // namespace ckpt::harness
