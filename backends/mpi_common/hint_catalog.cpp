#include "backends/mpi_common/hint_catalog.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <numeric>

#include "backends/suggest.hpp"

namespace ckpt::backends::mpi {
namespace {

using enum HintKind;

// Sources: the MPI standard's reserved hints for files (access_style ... striping_unit), ROMIO's
// ADIOI_GEN_SetInfo and Lustre driver (romio_*, ind_*_buffer_size, cb_config_list,
// direct_read/write), and Open MPI's MPI_File_set_info man page (the *_bufsize, *_timeout and
// mpiio_* hints of its older io components).
const std::vector<HintSpec> kHints = {
    {"access_style", text, "comma-separated access pattern, e.g. write_once,sequential"},
    {"cb_block_size", positive_integer, "collective buffering block size in bytes"},
    {"cb_buffer_size", positive_integer, "collective buffer size per aggregator in bytes"},
    {"cb_config_list", text, "aggregator placement, e.g. *:1"},
    {"cb_nodes", positive_integer, "number of collective I/O aggregators"},
    {"chunked", text, "comma-separated array dimensions"},
    {"chunked_item", text, "comma-separated element sizes"},
    {"chunked_size", text, "comma-separated chunk dimensions"},
    {"coll_read_bufsize", positive_integer, "collective read buffer in bytes"},
    {"coll_write_bufsize", positive_integer, "collective write buffer in bytes"},
    {"collective_buffering", boolean, "whether to aggregate collective accesses"},
    {"direct_read", boolean, "O_DIRECT reads where the driver supports them"},
    {"direct_write", boolean, "O_DIRECT writes where the driver supports them"},
    {"file_perm", text, "permissions of a created file, e.g. 0644"},
    {"ind_rd_buffer_size", positive_integer, "data-sieving read buffer in bytes"},
    {"ind_wr_buffer_size", positive_integer, "data-sieving write buffer in bytes"},
    {"io_node_list", text, "comma-separated I/O devices"},
    {"mpiio_coll_contiguous", boolean, "collective accesses are contiguous"},
    {"mpiio_concurrency", boolean, "nonblocking accesses may run concurrently"},
    {"nb_proc", positive_integer, "number of processes expected to access the file"},
    {"noncoll_read_bufsize", positive_integer, "independent read buffer in bytes"},
    {"noncoll_write_bufsize", positive_integer, "independent write buffer in bytes"},
    {"num_io_nodes", positive_integer, "number of I/O devices"},
    {"romio_cb_alltoall", toggle, "all-to-all exchange in two-phase I/O"},
    {"romio_cb_ds_threshold", counting_integer,
     "data-sieving threshold in collective I/O (percent)"},
    {"romio_cb_fr_alignment", positive_integer, "file realm alignment in bytes"},
    {"romio_cb_fr_types", text, "file realm assignment: aar, fsz, usr_realms or a size"},
    {"romio_cb_pfr", toggle, "persistent file realms"},
    {"romio_cb_read", toggle, "collective buffering on reads"},
    {"romio_cb_write", toggle, "collective buffering on writes"},
    {"romio_ds_read", toggle, "data sieving on independent reads"},
    {"romio_ds_write", toggle, "data sieving on independent writes"},
    {"romio_lustre_co_ratio", positive_integer, "I/O clients per Lustre OST"},
    {"romio_lustre_coll_threshold", counting_integer,
     "request size above which collective I/O is skipped"},
    {"romio_lustre_ds_in_coll", toggle, "data sieving inside collective I/O on Lustre"},
    {"romio_lustre_start_iodevice", counting_integer, "first Lustre OST of a new file"},
    {"romio_min_fdomain_size", positive_integer, "smallest file domain of an aggregator in bytes"},
    {"romio_no_indep_rw", boolean, "the file is accessed collectively only (deferred open)"},
    {"rwlock_timeout", counting_integer, "seconds to wait for a byte-range lock"},
    {"shared_file_timeout", counting_integer, "seconds to wait for the shared file pointer"},
    {"start_iodevice", counting_integer, "first I/O device of a new file"},
    {"striping_factor", positive_integer,
     "number of I/O devices (OSTs) a new file is striped over"},
    {"striping_unit", positive_integer, "stripe size of a new file in bytes"},
};

std::optional<long long> parse_integer(std::string_view value) {
  long long number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || value.empty())
    return std::nullopt;
  return number;
}

}  // namespace

const std::vector<HintSpec>& known_hints() {
  return kHints;
}

std::optional<HintSpec> find_hint(std::string_view name) {
  const auto found = std::find_if(kHints.begin(), kHints.end(),
                                  [&](const HintSpec& spec) { return spec.name == name; });
  if (found == kHints.end()) return std::nullopt;
  return *found;
}

std::optional<std::string> closest_hint(std::string_view name) {
  std::vector<std::string> names;
  for (const HintSpec& spec : kHints) names.emplace_back(spec.name);
  return closest_match(name, names);
}

std::optional<std::string> hint_value_problem(HintKind kind, std::string_view value) {
  switch (kind) {
    case toggle:
      if (value == "enable" || value == "disable" || value == "automatic") return std::nullopt;
      return "must be enable, disable or automatic";
    case boolean:
      if (value == "true" || value == "false") return std::nullopt;
      return "must be true or false";
    case positive_integer:
    case counting_integer: {
      const long long minimum = kind == positive_integer ? 1 : 0;
      const auto number = parse_integer(value);
      if (number && *number >= minimum && *number <= INT_MAX) return std::nullopt;
      return "must be a whole number from " + std::to_string(minimum) + " to " +
             std::to_string(INT_MAX) + " written in decimal digits (MPI hints are C ints)";
    }
    case text:
      if (!value.empty()) return std::nullopt;
      return "must not be empty (leave the hint out to keep the library's default)";
  }
  return std::nullopt;
}

}  // namespace ckpt::backends::mpi
