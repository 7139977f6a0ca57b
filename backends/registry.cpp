#include "backends/registry.hpp"

#include "backends/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <optional>
#include <stdexcept>

#if CKPT_HAVE_BACKEND_POSIX
#include "backends/posix/posix_backend.hpp"
#endif
#if CKPT_HAVE_BACKEND_URING
#include "backends/uring/uring_backend.hpp"
#endif
#if CKPT_HAVE_BACKEND_NULL
#include "backends/null/null_backend.hpp"
#endif
#if CKPT_HAVE_BACKEND_GDS
#include "backends/gds/gds_backend.hpp"
#endif
#if CKPT_HAVE_BACKEND_MPIIO
#include "backends/mpiio/mpiio_backend.hpp"
#endif
#if CKPT_HAVE_BACKEND_HDF5
#include "backends/hdf5/hdf5_backend.hpp"
#endif

namespace ckpt::backends {
namespace {

using Factory = std::unique_ptr<Backend> (*)(const IoSettings&, const BackendOptions&, const ProcessGroup&);
// Why a compiled-in backend cannot run on this machine with these options, or "" when it can.
using Probe = std::string (*)(const BackendOptions&);

struct Entry {
  BackendInfo info;
  Factory make = nullptr;  // null when not compiled in
  Probe probe = nullptr;   // null when compiled in means usable
};

constexpr std::string_view kNotBuilt = "not built yet";

// For backends without options or process group.
template <class B>
std::unique_ptr<Backend> construct(const IoSettings& settings, const BackendOptions&, const ProcessGroup&) {
  return std::make_unique<B>(settings);
}

std::string cmake_option(std::string_view name) {
  std::string option = "CKPT_BACKEND_";
  for (const char c : name)
    option += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return option;
}

Entry compiled(std::string_view name, std::string_view description, Factory make) {
  return Entry{
      BackendInfo{std::string(name), true, "", cmake_option(name), std::string(description)}, make};
}

Entry unavailable(std::string_view name, std::string_view description, std::string_view reason) {
  return Entry{BackendInfo{std::string(name), false, std::string(reason), cmake_option(name),
                           std::string(description)},
               nullptr};
}

// Unused when every optional backend is compiled in.
[[maybe_unused]] Entry disabled(std::string_view name, std::string_view description) {
  return unavailable(name, description,
                     "disabled at configure time (" + cmake_option(name) + "=OFF)");
}

// mpiio, compiled in or not; its options and MPI needs are listed either way.
Entry mpiio_entry() {
  constexpr std::string_view text = "MPI-IO (ROMIO or OMPIO): independent or collective, shared files";
#if CKPT_HAVE_BACKEND_MPIIO
  Entry entry = compiled("mpiio", text,
                         [](const IoSettings& settings, const BackendOptions& options,
                            const ProcessGroup& group) -> std::unique_ptr<Backend> {
    return std::make_unique<mpiio::MpiioBackend>(settings, options, group);
  });
#elif CKPT_MPIIO_NOT_FOUND
  Entry entry = unavailable("mpiio", text,
                            "no MPI at configure time (install libopenmpi-dev or an MPICH, keep "
                            "CKPT_WITH_MPI at AUTO or ON, then reconfigure)");
#else
  Entry entry = disabled("mpiio", text);
#endif
  entry.info.options = {
      {"collective", "false",
       "true: one MPI_File_write_at_all / read_at_all per file through an hindexed file view; "
       "false: independent MPI_File_write_at / read_at per extent"},
      {"hints.*", "",
       "MPI-IO info hints passed to MPI_File_open, e.g. hints.romio_cb_write = \"enable\", "
       "hints.cb_buffer_size = \"16777216\", hints.striping_factor = \"8\""}};
  entry.info.needs_mpi = true;
  return entry;
}

// hdf5, compiled in or not; its options and MPI needs are listed either way.
Entry hdf5_entry() {
  constexpr std::string_view text =
      "HDF5 datasets of the tensors' global shapes: parallel HDF5 (MPI-IO) for shared files, serial per rank";
#if CKPT_HAVE_BACKEND_HDF5
  Entry entry = compiled("hdf5", text,
                         [](const IoSettings& settings, const BackendOptions& options,
                            const ProcessGroup& group) -> std::unique_ptr<Backend> {
    return std::make_unique<hdf5::Hdf5Backend>(settings, options, group);
  });
#elif CKPT_HDF5_NOT_FOUND == 1
  Entry entry = unavailable("hdf5", text,
                            "no MPI at configure time (install libopenmpi-dev, keep CKPT_WITH_MPI at AUTO or ON, "
                            "then reconfigure)");
#elif CKPT_HDF5_NOT_FOUND == 2
  Entry entry = unavailable("hdf5", text,
                            "no HDF5 found at configure time (install libhdf5-openmpi-dev, then reconfigure)");
#elif CKPT_HDF5_NOT_FOUND == 3
  Entry entry = unavailable("hdf5", text,
                            "only a serial HDF5 found at configure time (install libhdf5-openmpi-dev, then "
                            "reconfigure)");
#else
  Entry entry = disabled("hdf5", text);
#endif
  entry.info.options = {
      {"collective", "true", "shared files: collective transfers (H5FD_MPIO_COLLECTIVE); false: independent"},
      {"collective_opt", "collective_io",
       "with collective: collective_io (two-phase MPI-IO) or individual_io (each process's own MPI-IO inside the "
       "collective calls: H5Pset_dxpl_mpio_collective_opt)"},
      {"layout", "contiguous",
       "contiguous, or chunked: a chunk is a piece's slice shape, outer dimensions reduced below 2 GiB"},
      {"shapes", "scaled",
       "with model.scale > 1: scaled, datasets with the leading dimension divided by the scale where exact "
       "(dense files); global: the global shapes, filled in part (sparse files)"},
      {"alignment", "0", "H5Pset_alignment: align file objects to this many bytes; 0: HDF5's default (none)"},
      {"alignment_threshold", "65536", "with alignment: only objects of at least this many bytes are aligned"},
      {"collective_metadata", "true",
       "shared files: collective metadata reads and writes (H5Pset_all_coll_metadata_ops, "
       "H5Pset_coll_metadata_write)"},
      {"hints.*", "", "MPI-IO info hints for H5Pset_fapl_mpio, e.g. hints.romio_cb_write = \"enable\""}};
  entry.info.needs_mpi = true;
  return entry;
}

// gds, compiled in or not. Compiled in, it still needs libcufile, the NVIDIA driver and a GPU at
// run time: the probe says which is missing.
Entry gds_entry() {
  constexpr std::string_view text = "NVIDIA GPUDirect Storage (cuFile, loaded at run time): device memory to file";
#if CKPT_HAVE_BACKEND_GDS
  Entry entry = compiled("gds", text,
                         [](const IoSettings& settings, const BackendOptions& options,
                            const ProcessGroup&) -> std::unique_ptr<Backend> {
    return std::make_unique<gds::GdsBackend>(settings, gds::parse_options(options));
  });
  entry.probe = &gds::unavailable_reason;
#elif CKPT_GDS_NOT_FOUND
  Entry entry = unavailable("gds", text,
                            "cuda.h or cufile.h not found at configure time (install the CUDA toolkit; "
                            "ci/setup.sh puts the nvidia-cufile wheel's cufile.h into .deps/cufile), then reconfigure");
#else
  Entry entry = disabled("gds", text);
#endif
  entry.info.options = {
      {"library", "libcufile.so.0",
       "libcufile to load: a path, or a name the dynamic loader finds; at this default, "
       "$CKPT_CUFILE_LIBRARY wins when set"},
      {"register_buffers", "true", "register device memory with cuFileBufRegister for each write or read"},
      {"batch", "false", "submit queue_depth requests at a time through the cuFile batch API"}};
  return entry;
}

// The one place that knows every backend, in the order listings show them.
std::vector<Entry> registered() {
  constexpr std::string_view posix_text =
      "POSIX pread/pwrite; O_DIRECT, fallocate, fsync/fdatasync, threads";
  constexpr std::string_view uring_text =
      "Linux io_uring (liburing): queued asynchronous I/O; O_DIRECT, registered buffers";
  constexpr std::string_view null_text = "no I/O: measures the harness's own overhead";
  std::vector<Entry> entries;
#if CKPT_HAVE_BACKEND_POSIX
  entries.push_back(compiled("posix", posix_text, &construct<posix::PosixBackend>));
#else
  entries.push_back(disabled("posix", posix_text));
#endif
#if CKPT_HAVE_BACKEND_URING
  entries.push_back(compiled("uring", uring_text,
                             [](const IoSettings& settings, const BackendOptions&,
                                const ProcessGroup&) -> std::unique_ptr<Backend> {
    return std::make_unique<uring::UringBackend>(settings, uring::UringOptions{.sqpoll = settings.sqpoll});
  }));
#elif CKPT_URING_NOT_FOUND
  entries.push_back(
      unavailable("uring", uring_text,
                  "liburing not found at configure time (install liburing-dev, then reconfigure)"));
#else
  entries.push_back(disabled("uring", uring_text));
#endif
  entries.push_back(mpiio_entry());
  entries.push_back(hdf5_entry());
  entries.push_back(gds_entry());
#if CKPT_HAVE_BACKEND_NULL
  entries.push_back(compiled("null", null_text, &construct<null::NullBackend>));
#else
  entries.push_back(disabled("null", null_text));
#endif
  return entries;
}

// Whether `key` is one of `options` (a listed "prefix.*" accepts "prefix.<anything>").
bool known_option(const std::vector<BackendOption>& options, std::string_view key) {
  for (const BackendOption& option : options) {
    if (option.key == key) return true;
    if (option.key.ends_with(".*")) {
      const std::string_view prefix = std::string_view(option.key).substr(0, option.key.size() - 1);
      if (key.size() > prefix.size() && key.starts_with(prefix)) return true;
    }
  }
  return false;
}

// The closest of `words` when it is plausibly a misspelling.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& words) {
  return closest_match(word, words);
}

std::vector<std::string> names_of(const std::vector<Entry>& entries) {
  std::vector<std::string> names;
  for (const Entry& entry : entries) names.push_back(entry.info.name);
  return names;
}

std::vector<std::string> keys_of(const std::vector<BackendOption>& options) {
  std::vector<std::string> keys;
  for (const BackendOption& option : options) keys.push_back(option.key);
  return keys;
}

void check_options(const BackendInfo& info, const BackendOptions& options) {
  for (const auto& [key, value] : options) {
    if (known_option(info.options, key)) continue;
    std::string message = "backend `" + info.name + "` has no option `" + key + "`";
    if (const auto match = closest(key, keys_of(info.options))) message += " — did you mean `" + *match + "`?";
    if (info.options.empty()) {
      message += " (it takes no options)";
    } else {
      message += " (options:";
      for (const BackendOption& option : info.options) message += " " + option.key;
      message += ")";
    }
    throw std::invalid_argument(message);
  }
}

[[noreturn]] void throw_unknown(std::string_view name, const std::vector<Entry>& entries) {
  std::string message = "unknown backend `" + std::string(name) + "`";
  if (const auto match = closest(name, names_of(entries))) message += " — did you mean `" + *match + "`?";
  message += " (backends:";
  for (const Entry& entry : entries) message += " " + entry.info.name;
  throw std::invalid_argument(message + ")");
}

}  // namespace

std::vector<BackendInfo> list_backends() {
  std::vector<BackendInfo> infos;
  for (Entry& entry : registered()) {
    if (entry.probe != nullptr) {
      entry.info.reason = entry.probe({});
      entry.info.available = entry.info.reason.empty();
    }
    infos.push_back(std::move(entry.info));
  }
  return infos;
}

namespace {

// The entry of `name`, checked: known, compiled in, options known, usable on this machine.
Entry checked_entry(std::string_view name, const BackendOptions& options) {
  std::vector<Entry> entries = registered();
  const auto found = std::find_if(entries.begin(), entries.end(),
                                  [&](const Entry& entry) { return entry.info.name == name; });
  if (found == entries.end()) throw_unknown(name, entries);
  if (found->make == nullptr) {
    throw std::invalid_argument("backend `" + found->info.name +
                                "` is not available in this build: " + found->info.reason +
                                " (CMake option " + found->info.cmake_option + ")");
  }
  check_options(found->info, options);
  if (found->probe != nullptr) {
    if (const std::string reason = found->probe(options); !reason.empty()) {
      throw std::invalid_argument("backend `" + found->info.name + "` is not available on this machine: " + reason +
                                  " (compiled in with " + found->info.cmake_option + ", but it cannot run here)");
    }
  }
  return std::move(*found);
}

}  // namespace

void validate_backend(std::string_view name, const IoSettings&, const BackendOptions& options) {
  checked_entry(name, options);
}

std::unique_ptr<Backend> make_backend(std::string_view name, const IoSettings& settings,
                                      const BackendOptions& options, const ProcessGroup& group) {
  return checked_entry(name, options).make(settings, options, group);
}

std::string closest_option(std::string_view name, std::string_view key) {
  for (const Entry& entry : registered()) {
    if (entry.info.name == name) return closest(key, keys_of(entry.info.options)).value_or("");
  }
  return "";
}

}  // namespace ckpt::backends
