#include "harness/spec/load_settings.hpp"

namespace ckpt::harness {

std::string_view load_method_name(LoadMethod method) {
  switch (method) {
    case LoadMethod::mmap:
      return "mmap";
    case LoadMethod::read:
      return "read";
    case LoadMethod::pipelined:
      break;
  }
  return "pipelined";
}

std::optional<LoadMethod> parse_load_method(std::string_view name) {
  for (LoadMethod m : {LoadMethod::pipelined, LoadMethod::mmap, LoadMethod::read}) {
    if (load_method_name(m) == name) return m;
  }
  return std::nullopt;
}

}  // namespace ckpt::harness
