#include "backends/gds/gds_backend.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <utility>

#include "backends/file_common/direct_checks.hpp"
#include "backends/file_common/posix_file.hpp"
#include "backends/file_common/work_split.hpp"
#include "backends/file_common/workers.hpp"
#include "backends/gds/gds_file.hpp"

namespace ckpt::backends::gds {
namespace {

// The checks that need no library, before any is loaded.
IoSettings validated(const IoSettings& settings) {
  file_common::validate_direct_alignment("gds", settings);
  return settings;
}

// The loaders' texts name what is missing; the backend's own errors start with its name.
template <class Load>
auto prefixed(Load load) -> decltype(load()) {
  try {
    return load();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("gds: ") + e.what());
  }
}

std::string library_note(const CufileLibrary& library) {
  std::string line = "cuFile library: " + library.path();
  int version = 0;
  if (library.api().get_version != nullptr &&
      library.api().get_version(&version).err == CU_FILE_SUCCESS) {
    line += " (cuFileGetVersion " + std::to_string(version) + ")";
  }
  return line;
}

}  // namespace

std::string unavailable_reason(const BackendOptions& options) {
  const auto library = options.find("library");
  try {
    const CufileLibrary loaded =
        CufileLibrary::load(choose_library(library == options.end() ? "" : library->second));
    const CudaDriver cuda = CudaDriver::load();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

class GdsBackend::Files final : public Backend::OpenFiles {
 public:
  struct Entry {
    std::string path;
    GdsFile file;
  };
  std::vector<Entry> entries;
};

GdsBackend::GdsBackend(const IoSettings& settings, const GdsOptions& options)
    : settings_(validated(settings)),
      options_(options),
      library_(prefixed([&] { return CufileLibrary::load(choose_library(options.library)); })),
      cuda_(prefixed([] { return CudaDriver::load(); })),
      driver_(library_.api()),
      mode_(driver_.mode()) {
  batch_ = options_.batch && library_.api().has_batch();
  fixed_notes_ = {library_note(library_), mode_.description};
  if (options_.batch && !batch_) {
    fixed_notes_.push_back("cuFile batch API not in " + library_.path() +
                           ": one request at a time per thread");
  }
  if (batch_ && static_cast<unsigned>(settings_.queue_depth) > max_batch()) {
    throw std::invalid_argument("gds: `queue_depth` " + std::to_string(settings_.queue_depth) +
                                " exceeds cuFile's batch size " + std::to_string(max_batch()) +
                                " (properties.io_batchsize in cufile.json)");
  }
}

GdsBackend::~GdsBackend() = default;

unsigned GdsBackend::max_batch() const {
  return mode_.max_batch > 0 ? mode_.max_batch : static_cast<unsigned>(kDefaultMaxBatch);
}

Capabilities GdsBackend::capabilities() const {
  Capabilities caps = declared_capabilities(
      {"gds", option_table(), {{"batch", options_.batch ? "true" : "false"}}});
  caps.max_queue_depth = batch_ ? static_cast<int>(max_batch()) : 1;
  return caps;
}

std::vector<std::string> GdsBackend::notes() const {
  std::vector<std::string> lines = fixed_notes_;
  const std::lock_guard lock(mutex_);
  lines.insert(lines.end(), notes_.begin(), notes_.end());
  return lines;
}

void GdsBackend::note(std::string line) {
  const std::lock_guard lock(mutex_);
  for (const std::string& existing : notes_) {
    if (existing == line) return;  // once per write or read, not once per worker
  }
  notes_.push_back(std::move(line));
}

std::unique_ptr<Backend::OpenFiles> GdsBackend::open(const IoPlan& plan, Direction direction) {
  {
    const std::lock_guard lock(mutex_);
    notes_.clear();
  }
  if (settings_.direct) file_common::check_direct_plan("gds", plan, settings_.direct_alignment);
  const bool writing = direction == Direction::write;
  int flags = O_CLOEXEC | (writing ? O_WRONLY | O_CREAT : O_RDONLY);
  if (settings_.direct) flags |= O_DIRECT;

  auto files = std::make_unique<Files>();
  files->entries.reserve(plan.files.size());
  for (const FilePlan& file : plan.files) {
    GdsFile handle = open_gds_file(library_.api(), file.path, flags);
    if (writing && settings_.fallocate)
      reserve(handle, file.path, file.reserve_offset, file.file_size);
    files->entries.push_back(Files::Entry{file.path, std::move(handle)});
  }
  return files;
}

CUcontext GdsBackend::context_for(const MemoryView& memory) {
  if (memory.kind == MemoryKind::device && memory.size > 0) {
    if (const CUcontext context = cuda_.device_memory_context(memory)) return context;
  }
  if (const CUcontext context = cuda_.current_context()) return context;
  if (!fallback_context_) fallback_context_.emplace(cuda_, 0);
  return fallback_context_->get();
}

BufferRegistration GdsBackend::register_buffer(const MemoryView& memory) {
  if (memory.kind != MemoryKind::device) {
    note("host memory handed to cuFile: no GPUDirect path, and the buffer is not registered");
    return {};
  }
  if (!options_.register_buffers || memory.size == 0) return {};
  std::string error;
  BufferRegistration registration =
      BufferRegistration::make(library_.api(), memory.data, memory.size, error);
  if (!registration.is_registered())
    note("buffer registration refused, buffers used unregistered: " + error);
  return registration;
}

void GdsBackend::move_requests(const std::vector<Request>& requests, std::byte* base, bool writing,
                               std::stop_token stop) {
  const RequestMover mover(library_.api(), base, writing);
  if (batch_ && !requests.empty()) {
    std::string error;
    BatchQueue queue =
        BatchQueue::set_up(library_.api(), static_cast<unsigned>(settings_.queue_depth), error);
    if (queue.is_set_up()) {
      queue.run(requests, mover, base, writing, stop);
      return;
    }
    note("cuFile batch refused, one request at a time: " + error);
  }
  for (const Request& request : requests) {
    if (stop.stop_requested()) return;
    mover.move(request);
  }
}

void GdsBackend::transfer(OpenFiles& open_files, const IoPlan& plan, MemoryView memory,
                          Direction direction) {
  file_common::check_direct_memory("gds", plan, memory, settings_);
  const CUcontext context = context_for(memory);
  const ContextScope scope(cuda_, context);
  const BufferRegistration registration = register_buffer(memory);
  auto& files = static_cast<Files&>(open_files);
  const std::uint64_t granule = settings_.direct ? settings_.direct_alignment : file_common::kPage;
  const auto lists =
      file_common::split_by_bytes(plan, static_cast<std::size_t>(settings_.threads), granule);
  const bool writing = direction == Direction::write;

  auto body = [&](std::size_t k, std::stop_token stop) {
    const ContextScope worker(cuda_, context);
    std::vector<Request> requests;
    for (const file_common::Piece& piece : lists[k]) {
      const Files::Entry& entry = files.entries[piece.file];
      append_requests(requests,
                      Request{entry.file.handle(), &entry.path, piece.file_offset,
                              piece.memory_offset, piece.length, plan.files[piece.file].data_end});
    }
    move_requests(requests, memory.data, writing, stop);
  };
  if (lists.size() == 1) {
    body(0, std::stop_token{});
  } else if (lists.size() > 1) {
    file_common::run_workers(lists.size(), body);
  }
}

void GdsBackend::sync(OpenFiles& open_files, Direction direction) {
  if (direction != Direction::write || settings_.sync == SyncPolicy::none) return;
  file_common::sync_all("gds", static_cast<Files&>(open_files).entries, settings_.sync);
}

void GdsBackend::close(OpenFiles& open_files) {
  file_common::close_all("gds", static_cast<Files&>(open_files).entries);
}

}  // namespace ckpt::backends::gds
