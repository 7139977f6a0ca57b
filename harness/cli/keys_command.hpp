#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

namespace ckpt::harness {

struct KeysOptions {
  std::string prefix;  // a table ("load", "backend.hdf5") or one dotted key; empty: every key
  bool json = false;
  bool markdown = false;
};

// `ckptbench keys`: every campaign key with its type, default, range or choices and help, from
// the campaign schema (the one declaration of each key). --markdown prints docs/campaign-keys.md's
// generated part. Throws std::invalid_argument for a prefix that names no key or table.
CLI::App* add_keys_command(CLI::App& app, KeysOptions& options);
void run_keys(const KeysOptions& options, std::ostream& out);

}  // namespace ckpt::harness
