#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ckpt::harness {

// A CLI11 check that the value is one of `choices`; the failure names them and the closest one
// ("`restor` is not one of checkpoint, restore, both — did you mean `restore`?").
CLI::Validator one_of(std::vector<std::string> choices);

}  // namespace ckpt::harness
