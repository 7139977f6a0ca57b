#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::backends::mpi {

// What values an MPI-IO hint takes.
enum class HintKind {
  toggle,            // enable | disable | automatic (ROMIO's romio_cb_*, romio_ds_*)
  boolean,           // true | false
  positive_integer,  // 1 .. INT_MAX: buffer sizes, counts
  counting_integer,  // 0 .. INT_MAX: thresholds, device indices
  text,              // free text the library parses (cb_config_list "*:1", access_style lists)
};

struct HintSpec {
  std::string_view name;
  HintKind kind;
  std::string_view meaning;  // a few words for error messages
};

// The MPI-IO hints ckptbench knows: the MPI standard's reserved file hints, ROMIO's (generic and
// Lustre driver) and those Open MPI's OMPIO reads. Sorted by name.
const std::vector<HintSpec>& known_hints();

// The spec of `name`, or none.
std::optional<HintSpec> find_hint(std::string_view name);

// The closest known hint name when `name` is plausibly a misspelling of it.
std::optional<std::string> closest_hint(std::string_view name);

// Why `value` is not a valid value of a hint of `kind` ("must be enable, disable or automatic"),
// or none when it is.
std::optional<std::string> hint_value_problem(HintKind kind, std::string_view value);

}  // namespace ckpt::backends::mpi
