#include "backends/mpiio/mpiio_backend.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "backends/mpi_common/file_comms.hpp"
#include "backends/mpi_common/mpi_error.hpp"
#include "backends/mpiio/mpiio_declaration.hpp"
#include "backends/mpiio/phase_errors.hpp"
#include "backends/mpiio/transfer.hpp"

namespace ckpt::backends::mpiio {
namespace {

constexpr std::string_view kName = "mpiio";

// Hints worth recording when the user set none: they tell ROMIO (romio_*) from OMPIO and show
// the collective buffering in use.
constexpr std::string_view kReportedDefaults[] = {
    "cb_buffer_size", "cb_nodes",        "romio_cb_write", "romio_cb_read",
    "romio_ds_write", "striping_factor", "striping_unit"};

// The options, checked in full before MPI is touched: `collective`, then the hints.
MpiioOptions validated(const BackendOptions& options) {
  MpiioOptions parsed = parse_mpiio_options(options);
  mpi::validated_hints(kName, options);
  return parsed;
}

// Whether `key` is among the hints; `value` is set to its value when it is.
bool lookup(MPI_Info info, std::string_view key, std::string& value) {
  char text[MPI_MAX_INFO_VAL + 1] = {};
  int flag = 0;
#if MPI_VERSION >= 4
  int length = MPI_MAX_INFO_VAL + 1;
  MPI_Info_get_string(info, std::string(key).c_str(), &length, text, &flag);
#else
  MPI_Info_get(info, std::string(key).c_str(), MPI_MAX_INFO_VAL, text, &flag);
#endif
  if (flag) value = text;
  return flag != 0;
}

}  // namespace

MpiioOptions parse_mpiio_options(const BackendOptions& options) {
  const OptionValues values(kName, option_table(), options);
  return MpiioOptions{.collective = values.boolean("collective")};
}

class MpiioBackend::Files final : public Backend::OpenFiles {
 public:
  Files(MPI_Comm group, const IoPlan& plan) : comms(group, plan, kName) {}
  // Closes in path order on every process, as close() does: MPI_File_close is collective.
  ~Files() override {
    for (OpenedFile& entry : entries) entry.file.close();
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;

  mpi::FileComms comms;
  std::vector<OpenedFile> entries;  // one per distinct path, in path order
};

MpiioBackend::MpiioBackend(const IoSettings& settings, const BackendOptions& options,
                           const ProcessGroup& group)
    : settings_(settings),
      options_(validated(options)),
      group_(kName, group),
      hints_(kName, options) {}

Capabilities MpiioBackend::capabilities() const {
  return declared_capabilities({kName, option_table(), {}});
}

std::unique_ptr<Backend::OpenFiles> MpiioBackend::open(const IoPlan& plan, Direction direction) {
  notes_.clear();
  const bool writing = direction == Direction::write;
  if (writing && settings_.sync == SyncPolicy::fdatasync) {
    notes_.push_back(
        "sync = fdatasync served by MPI_File_sync, which flushes data and metadata (like fsync)");
  }
  auto files = std::make_unique<Files>(group_.get(), plan);
  // Sorted by path: every process opens (and closes) its shared files in one global order.
  std::map<std::string, OpenedFile> by_path;
  for (std::size_t i = 0; i < plan.files.size(); ++i) {
    const FilePlan& file = plan.files[i];
    OpenedFile& entry = by_path[file.path];
    entry.path = file.path;
    if (file.shared) {
      entry.shared = true;
      entry.comm = files->comms.of(i);
    }
    entry.extents.insert(entry.extents.end(), file.extents.begin(), file.extents.end());
  }
  const int amode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
  PhaseErrors errors;
  for (auto& [path, entry] : by_path) {
    MPI_File handle = MPI_FILE_NULL;
    const int code = MPI_File_open(entry.comm, path.c_str(), amode, hints_.get(), &handle);
    if (code == MPI_SUCCESS) {
      entry.file = MpiFile(handle);
      MPI_File_set_errhandler(handle, MPI_ERRORS_RETURN);
      if (files->entries.empty()) note_hints(handle);
    }
    errors.capture([&] {
      mpi::check_mpi(code, kName, writing ? "MPI_File_open (create)" : "MPI_File_open", path);
    });
    files->entries.push_back(std::move(entry));
  }
  errors.finish(group_.get(), kName, "open");
  return files;
}

void MpiioBackend::transfer(OpenFiles& open_files, const IoPlan&, MemoryView memory,
                            Direction direction) {
  auto& files = static_cast<Files&>(open_files);
  const TransferContext context{kName, memory.data, direction == Direction::write, hints_.get()};
  PhaseErrors errors;
  for (const OpenedFile& entry : files.entries) {
    if (!context.writing) errors.capture([&] { check_within_file(entry, kName); });
    // A file only this process opens (file per rank) has nothing to collect: collective calls
    // would only copy through ROMIO's collective buffer. Independent calls, noted.
    int openers = 1;
    MPI_Comm_size(entry.comm, &openers);
    if (options_.collective && openers > 1) {
      const CollectiveRounds made = transfer_collective(entry, context, errors);
      add_note("collective: " + std::to_string(made.rounds) + " MPI_File_" +
               (context.writing ? "write" : "read") + "_at_all rounds on " +
               std::to_string(openers) + " processes, at most " + std::to_string(made.limit) +
               " bytes per process each (the plan's largest request), " +
               (made.contiguous ? "one piece per process a round at an explicit offset"
                                : "through an hindexed file view per round"));
    } else if (!errors.failed()) {
      errors.capture([&] { transfer_independent(entry, context); });
    }
    if (options_.collective && openers == 1) {
      add_note(
          "files only one process opens take independent transfers (collective applies to shared "
          "files)");
    }
  }
  errors.finish(group_.get(), kName, context.writing ? "write" : "read");
}

void MpiioBackend::sync(OpenFiles& open_files, Direction direction) {
  if (direction != Direction::write || settings_.sync == SyncPolicy::none) return;
  PhaseErrors errors;
  for (const OpenedFile& entry : static_cast<Files&>(open_files).entries) {
    const int code = MPI_File_sync(entry.file.get());
    errors.capture([&] { mpi::check_mpi(code, kName, "MPI_File_sync", entry.path); });
  }
  errors.finish(group_.get(), kName, "sync");
}

void MpiioBackend::add_note(const std::string& note) {
  if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
}

void MpiioBackend::note_hints(MPI_File file) {
  MPI_Info used = MPI_INFO_NULL;
  if (MPI_File_get_info(file, &used) != MPI_SUCCESS || used == MPI_INFO_NULL) {
    if (!hints_.hints().empty()) add_note("MPI_File_get_info reported no hints");
    return;
  }
  std::string in_effect;
  std::string ignored;
  std::string value;
  if (hints_.hints().empty()) {
    for (const std::string_view key : kReportedDefaults) {
      if (lookup(used, key, value)) in_effect += " " + std::string(key) + "=" + value;
    }
  }
  for (const auto& [key, given] : hints_.hints()) {
    if (!lookup(used, key, value)) {
      ignored += " " + key;
    } else {
      in_effect += " " + key + "=" + value + (value == given ? "" : " (asked " + given + ")");
    }
  }
  MPI_Info_free(&used);
  // One note per distinct set, not per file: results list notes once per case.
  if (!in_effect.empty()) add_note("MPI-IO hints in effect:" + in_effect);
  if (!ignored.empty()) {
    add_note(
        "MPI-IO hints not reported back by MPI_File_get_info (this MPI-IO implementation may "
        "ignore them):" +
        ignored);
  }
}

void MpiioBackend::close(OpenFiles& open_files) {
  PhaseErrors errors;
  for (OpenedFile& entry : static_cast<Files&>(open_files).entries) {
    const int code = entry.file.close();
    errors.capture([&] { mpi::check_mpi(code, kName, "MPI_File_close", entry.path); });
  }
  errors.finish(group_.get(), kName, "close");
}

}  // namespace ckpt::backends::mpiio
