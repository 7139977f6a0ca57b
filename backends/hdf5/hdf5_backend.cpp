#include "backends/hdf5/hdf5_backend.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "backends/hdf5/agreement.hpp"
#include "backends/hdf5/catalog.hpp"
#include "backends/hdf5/hdf5_declaration.hpp"
#include "backends/hdf5/hdf5_error.hpp"
#include "backends/hdf5/hdf5_file.hpp"
#include "backends/hdf5/local_shapes.hpp"
#include "backends/hdf5/piece_transfer.hpp"
#include "backends/hdf5/scaled_shapes.hpp"
#include "backends/mpi_common/file_comms.hpp"

namespace ckpt::backends::hdf5 {
namespace {

// One file of the plan with every piece this process has of it (plans naming a path twice,
// such as two modeled ranks of one process, are merged).
struct FileEntry {
  std::string path;
  bool shared = false;
  std::size_t plan_index = 0;  // the first FilePlan naming the path (for its communicator)
  std::vector<DatasetPiece> pieces;
  FileContents contents;
  std::map<std::string, SliceOrigin> origins;  // serial files: datasets of slice shape
};

// The plan's files, serial ones first in plan order, then shared ones sorted by path: every
// process meets the collective calls of the files it shares in the same order.
std::vector<FileEntry> entries_of(const IoPlan& plan) {
  std::vector<FileEntry> entries;
  std::map<std::string, std::size_t> by_path;
  for (std::size_t i = 0; i < plan.files.size(); ++i) {
    const FilePlan& file = plan.files[i];
    const auto [it, inserted] = by_path.try_emplace(file.path, entries.size());
    if (inserted) entries.push_back(FileEntry{file.path, false, i, {}, {}});
    FileEntry& entry = entries[it->second];
    entry.shared = entry.shared || file.shared;
    const std::vector<DatasetPiece> pieces = pieces_of(file);
    entry.pieces.insert(entry.pieces.end(), pieces.begin(), pieces.end());
  }
  std::stable_sort(entries.begin(), entries.end(), [](const FileEntry& a, const FileEntry& b) {
    if (a.shared != b.shared) return !a.shared;
    return a.shared && a.path < b.path;
  });
  return entries;
}

// The first problem with the pieces, or none; `memory_size` bounds their memory ranges.
// With `scale` > 0, once the pieces passed, gives serial files' datasets their slice shapes and
// builds each entry's contents (scale: of the plan, or 1 for global shapes).
std::optional<std::string> problem_with(std::vector<FileEntry>& entries, const IoPlan& plan,
                                        std::uint64_t memory_size, std::uint64_t scale) {
  try {
    for (FileEntry& entry : entries) {
      check_pieces(entry.path, entry.pieces, memory_size);
      if (scale == 0) continue;
      if (!entry.shared) entry.origins = localize(entry.pieces);
      entry.contents = contents_of(entry.path, entry.pieces, plan.attributes);
      record_origins(entry.contents, entry.origins);
      mark_shrinkable(entry.contents, entry.pieces, scale);
    }
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return std::nullopt;
}

// Throws when this or another process of the group found a problem (all of them learn it
// together, so that none waits in a collective call the others never make).
void agree_on_problems(MPI_Comm group, const std::optional<std::string>& problem,
                       bool& any_shared) {
  const GroupVote result = vote(group, !problem, any_shared);
  any_shared = result.any_flag;
  if (problem) throw std::invalid_argument(*problem);
  if (!result.all_ok)
    throw IoError("hdf5: another process's plan failed its checks (that process reports why)");
}

}  // namespace

class Hdf5Backend::Files final : public Backend::OpenFiles {
 public:
  ~Files() override {
    const QuietErrors quiet;  // an error path's leftovers close without printing HDF5's stack
    open.clear();
  }

  std::optional<mpi::FileComms> comms;
  std::vector<FileEntry> entries;
  std::vector<Hdf5File> open;  // entries[i] is open[i] once opened
  bool any_shared = false;     // whether any process of the group has a shared file
};

Hdf5Backend::Hdf5Backend(const IoSettings& settings, const BackendOptions& options,
                         const ProcessGroup& group)
    : settings_(settings),
      options_(Hdf5Options::parse(options)),
      group_("hdf5", group),
      hints_("hdf5", options) {}

// From the headers' build configuration, not a library call: the registry lists capabilities
// before MPI starts, and initialising parallel HDF5 before MPI_Init is not allowed.
Capabilities library_capabilities(const OptionValues& values) {
  Capabilities c = declared_capabilities(values);
#ifdef H5_HAVE_THREADSAFE
  c.background_thread = true;
  c.advice.erase("background_thread");
#else
  c.background_thread = false;
  c.advice["background_thread"] =
      "the HDF5 library of this build (" H5_VERS_INFO
      ") is not thread-safe (built without "
      "--enable-threadsafe, as Debian's libhdf5-openmpi: H5is_library_threadsafe() is "
      "false), so no thread but the main one may call it";
#endif
  return c;
}

// The library itself confirms (MPI has started by now).
Capabilities Hdf5Backend::capabilities() const {
  Capabilities c = library_capabilities({"hdf5", option_table(), {}});
  hbool_t threadsafe = 0;
  if (c.background_thread && H5is_library_threadsafe(&threadsafe) >= 0 && threadsafe == 0) {
    c.background_thread = false;
    c.advice["background_thread"] =
        "the HDF5 library of this build (" H5_VERS_INFO
        ") is not thread-safe "
        "(H5is_library_threadsafe() is false), so no thread but the main one may call it";
  }
  return c;
}

std::vector<std::string> Hdf5Backend::notes() const {
  return {notes_.begin(), notes_.end()};
}

std::unique_ptr<Backend::OpenFiles> Hdf5Backend::open(const IoPlan& plan, Direction direction) {
  const QuietErrors quiet;
  notes_.clear();
  auto files = std::make_unique<Files>();
  files->entries = entries_of(plan);
  files->any_shared = std::any_of(files->entries.begin(), files->entries.end(),
                                  [](const FileEntry& entry) { return entry.shared; });
  const std::uint64_t scale = options_.shapes == Shapes::scaled ? scale_of(plan.attributes) : 1;
  const auto problem =
      problem_with(files->entries, plan, std::numeric_limits<std::uint64_t>::max(), scale);
  agree_on_problems(group_.get(), problem, files->any_shared);
  files->comms.emplace(group_.get(), plan, "hdf5");
  for (FileEntry& entry : files->entries) {
    const MPI_Comm comm = entry.shared ? files->comms->of(entry.plan_index) : MPI_COMM_NULL;
    FileContents contents = entry.shared ? agree(comm, entry.contents, entry.path) : entry.contents;
    if (shrink(contents, entry.pieces) && entry.shared) agree_on_calls(comm, contents, entry.path);
    finish(contents, options_.layout);
    const FileAccess access{comm, hints_.get(), options_};
    files->open.push_back(direction == Direction::write
                              ? Hdf5File::create(entry.path, std::move(contents), access)
                              : Hdf5File::open(entry.path, std::move(contents), access));
  }
  return files;
}

void Hdf5Backend::transfer(OpenFiles& open_files, const IoPlan& plan, MemoryView memory,
                           Direction direction) {
  const QuietErrors quiet;
  auto& files = static_cast<Files&>(open_files);
  const auto problem = problem_with(files.entries, plan, memory.size, 0);
  if (files.any_shared) {
    agree_on_problems(group_.get(), problem, files.any_shared);
  } else if (problem) {
    throw std::invalid_argument(*problem);
  }
  const TransferMode mode{direction == Direction::write, options_.collective,
                          options_.individual_io};
  for (std::size_t i = 0; i < files.open.size(); ++i) {
    move_pieces(files.open[i], files.entries[i].pieces, memory, mode, notes_);
  }
}

void Hdf5Backend::sync(OpenFiles& open_files, Direction direction) {
  if (direction != Direction::write || settings_.sync == SyncPolicy::none) return;
  const QuietErrors quiet;
  for (Hdf5File& file : static_cast<Files&>(open_files).open) {
    file.flush(settings_.sync);
    if (file.parallel() && settings_.sync == SyncPolicy::fdatasync) {
      notes_.insert(
          "shared files are synced with MPI_File_sync (the MPI library's choice of fsync or "
          "fdatasync)");
    }
  }
}

void Hdf5Backend::close(OpenFiles& open_files) {
  const QuietErrors quiet;
  std::optional<IoError> first;
  for (Hdf5File& file : static_cast<Files&>(open_files).open) {
    try {
      file.close();
    } catch (const IoError& e) {
      if (!first) first = e;
    }
  }
  if (first) throw *first;
}

}  // namespace ckpt::backends::hdf5
