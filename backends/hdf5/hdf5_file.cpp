#include "backends/hdf5/hdf5_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <utility>

#include "backends/hdf5/agreement.hpp"
#include "backends/hdf5/element_types.hpp"
#include "backends/hdf5/hdf5_error.hpp"

namespace ckpt::backends::hdf5 {
namespace {

std::vector<hsize_t> dims_of(const std::vector<std::uint64_t>& values) {
  return std::vector<hsize_t>(values.begin(), values.end());
}

std::string shape_text(const std::vector<hsize_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

PlistId file_access_list(const FileAccess& access, const std::string& path) {
  const Where where{"set up file access for", path};
  PlistId fapl(check(H5Pcreate(H5P_FILE_ACCESS), where));
  if (access.parallel()) {
    check(H5Pset_fapl_mpio(fapl.get(), access.comm, access.info), where);
    if (access.options.collective_metadata) {
      check(H5Pset_all_coll_metadata_ops(fapl.get(), true), where);
      check(H5Pset_coll_metadata_write(fapl.get(), true), where);
    }
  }
  if (access.options.alignment > 0) {
    check(
        H5Pset_alignment(fapl.get(), access.options.alignment_threshold, access.options.alignment),
        where);
  }
  return fapl;
}

// Whether `path` is a non-empty regular file HDF5 recognises.
bool is_hdf5_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size == 0) return false;
  return H5Fis_hdf5(path.c_str()) > 0;
}

// Whether an HDF5 file is at `path`; in a shared file, as process 0 of its communicator sees it.
bool already_there(const std::string& path, const FileAccess& access) {
  if (!access.parallel()) return is_hdf5_file(path);
  int rank = 0;
  MPI_Comm_rank(access.comm, &rank);
  return broadcast_flag(access.comm, rank == 0 && is_hdf5_file(path), path);
}

SpaceId make_space(const std::vector<std::uint64_t>& shape, const Where& where) {
  if (shape.empty()) return SpaceId(check(H5Screate(H5S_SCALAR), where));
  const std::vector<hsize_t> dims = dims_of(shape);
  return SpaceId(
      check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), where));
}

void write_string_attribute(hid_t location, const std::string& name, const std::string& value,
                            const Where& where) {
  TypeId type(check(H5Tcopy(H5T_C_S1), where));
  check(H5Tset_size(type.get(), H5T_VARIABLE), where);
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), where);
  const SpaceId space(check(H5Screate(H5S_SCALAR), where));
  const htri_t exists = H5Aexists(location, name.c_str());
  if (exists < 0) fail(where);
  if (exists > 0) check(H5Adelete(location, name.c_str()), where);
  const AttributeId attribute(
      check(H5Acreate2(location, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
            where));
  const char* text = value.c_str();
  check(H5Awrite(attribute.get(), type.get(), &text), where);
}

// The variable-length string attribute `name` of `location`, or nothing when it has none.
std::optional<std::string> read_string_attribute(hid_t location, const std::string& name,
                                                 const Where& where) {
  const htri_t exists = H5Aexists(location, name.c_str());
  if (exists < 0) fail(where);
  if (exists == 0) return std::nullopt;
  const AttributeId attribute(check(H5Aopen(location, name.c_str(), H5P_DEFAULT), where));
  TypeId type(check(H5Tcopy(H5T_C_S1), where));
  check(H5Tset_size(type.get(), H5T_VARIABLE), where);
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), where);
  char* text = nullptr;
  check(H5Aread(attribute.get(), type.get(), &text), where);
  std::string value = text != nullptr ? text : "";
  H5free_memory(text);
  return value;
}

// Whether the link `name` exists, checking each group on the way (H5Lexists fails, rather than
// answering false, when an intermediate group is missing).
bool link_exists(hid_t file, const std::string& name, const Where& where) {
  for (std::size_t at = 0;;) {
    const std::size_t slash = name.find('/', at);
    const std::string prefix = name.substr(0, slash);
    if (!prefix.empty() && prefix.back() != '/') {
      const htri_t exists = H5Lexists(file, prefix.c_str(), H5P_DEFAULT);
      if (exists < 0) fail(where);
      if (exists == 0) return false;
    }
    if (slash == std::string::npos) return true;
    at = slash + 1;
  }
}

DatasetId create_dataset(hid_t file, const DatasetDef& def, hid_t type, const Where& where) {
  const SpaceId space = make_space(def.shape, where);
  const PlistId links(check(H5Pcreate(H5P_LINK_CREATE), where));
  check(H5Pset_create_intermediate_group(links.get(), 1), where);
  const PlistId creation(check(H5Pcreate(H5P_DATASET_CREATE), where));
  // Pieces may cover only part of a dataset (scaled-down tensors): never write fill values.
  check(H5Pset_fill_time(creation.get(), H5D_FILL_TIME_NEVER), where);
  // Allocated at creation, as parallel HDF5 always does, so that open pays for it alike.
  check(H5Pset_alloc_time(creation.get(), H5D_ALLOC_TIME_EARLY), where);
  if (!def.chunk.empty()) {
    const std::vector<hsize_t> chunk = dims_of(def.chunk);
    check(H5Pset_chunk(creation.get(), static_cast<int>(chunk.size()), chunk.data()), where);
  }
  DatasetId dataset(check(H5Dcreate2(file, def.name.c_str(), type, space.get(), links.get(),
                                     creation.get(), H5P_DEFAULT),
                          where));
  write_string_attribute(dataset.get(), "dtype", def.dtype, where);
  // A scaled-down checkpoint's dataset: the global leading dimension is this one times `scale`.
  if (def.shrink > 1)
    write_string_attribute(dataset.get(), "scale", std::to_string(def.shrink), where);
  // A slice of the tensor (serial files): its global shape and where the slice starts.
  if (!def.global_shape.empty()) {
    write_string_attribute(dataset.get(), "global_shape", shape_text(dims_of(def.global_shape)),
                           where);
    write_string_attribute(dataset.get(), "slice_offset", shape_text(dims_of(def.slice_offset)),
                           where);
  }
  return dataset;
}

// Checks that an existing dataset has the definition's element type and shape.
void check_existing(hid_t dataset, const DatasetDef& def, hid_t type, const Where& where) {
  const TypeId stored(check(H5Dget_type(dataset), where));
  const htri_t same = H5Tequal(stored.get(), type);
  if (same < 0) fail(where);
  if (same == 0) {
    fail(where, "its element type is not " + def.dtype +
                    " (stored: " + std::to_string(H5Tget_size(stored.get())) +
                    "-byte elements of HDF5 type class " +
                    std::to_string(static_cast<int>(H5Tget_class(stored.get()))) + ")");
  }
  const SpaceId space(check(H5Dget_space(dataset), where));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail(where);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0) fail(where);
  const bool fits =
      def.raw_bytes ? dims.size() == 1 && dims[0] >= def.needed : dims == dims_of(def.shape);
  // A slice-shaped dataset (serial files) must be a slice of the same tensor.
  if (fits && !def.global_shape.empty()) {
    const std::string planned = shape_text(dims_of(def.global_shape));
    const auto tensor = read_string_attribute(dataset, "global_shape", where);
    if (tensor && *tensor != planned) {
      fail(where,
           "it is a slice of a tensor of shape " + *tensor + ", the plan's tensor has " + planned);
    }
  }
  if (!fits) {
    const std::string hint =
        def.raw_bytes || dims.empty() || def.shape.empty() || dims[0] == def.shape[0]
            ? ""
            : " (model.scale divides leading dimensions when backend.hdf5.shapes = \"scaled\": "
              "read with the shapes setting the file was written with)";
    fail(where, "its shape is " + shape_text(dims) + ", the plan needs " +
                    (def.raw_bytes ? "[at least " + std::to_string(def.needed) + "]"
                                   : shape_text(dims_of(def.shape))) +
                    hint);
  }
}

}  // namespace

Hdf5File::Hdf5File(std::string path, FileContents contents, bool parallel)
    : path_(std::move(path)), contents_(std::move(contents)), parallel_(parallel) {}

Hdf5File Hdf5File::create(const std::string& path, FileContents contents,
                          const FileAccess& access) {
  Hdf5File file(path, std::move(contents), access.parallel());
  const PlistId fapl = file_access_list(access, path);
  if (already_there(path, access)) {
    file.file_ = FileId(
        check(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), Where{"open for writing", path}));
  } else {
    file.file_ = FileId(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                              Where{"create", path}));
  }
  file.open_datasets(true);
  for (const auto& [key, value] : file.contents_.attributes) {
    const std::string operation = "write the root attribute `" + key + "` of";
    write_string_attribute(file.file_.get(), key, value, Where{operation, path});
  }
  return file;
}

Hdf5File Hdf5File::open(const std::string& path, FileContents contents, const FileAccess& access) {
  Hdf5File file(path, std::move(contents), access.parallel());
  const PlistId fapl = file_access_list(access, path);
  file.file_ =
      FileId(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), Where{"open", path}));
  file.open_datasets(false);
  return file;
}

void Hdf5File::open_datasets(bool create) {
  types_.reserve(contents_.datasets.size());
  datasets_.reserve(contents_.datasets.size());
  for (const DatasetDef& def : contents_.datasets) {
    types_.push_back(file_type_of(def.dtype, path_));
    const hid_t type = types_.back().get();
    const Where where{create ? "create the dataset in" : "open the dataset in", path_, def.name};
    if (link_exists(file_.get(), def.name, where)) {
      datasets_.emplace_back(check(H5Dopen2(file_.get(), def.name.c_str(), H5P_DEFAULT), where));
      check_existing(datasets_.back().get(), def, type, where);
    } else if (create) {
      datasets_.push_back(create_dataset(file_.get(), def, type, where));
    } else {
      fail(where, "no such dataset");
    }
  }
}

void Hdf5File::flush(SyncPolicy sync) {
  if (sync == SyncPolicy::none) return;
  check(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), Where{"flush", path_});
  if (parallel_) return;  // the MPI-IO driver's flush is MPI_File_sync
  void* handle = nullptr;
  check(H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &handle),
        Where{"get the descriptor of", path_});
  const int fd = *static_cast<const int*>(handle);
  const bool data_only = sync == SyncPolicy::fdatasync;
  int result = 0;
  do {
    result = data_only ? ::fdatasync(fd) : ::fsync(fd);
  } while (result != 0 && errno == EINTR);
  if (result != 0) throw IoError("hdf5", data_only ? "fdatasync" : "fsync", path_, errno);
}

void Hdf5File::close() {
  std::string failed;  // the first dataset whose close failed, with HDF5's reason
  for (std::size_t i = 0; i < datasets_.size(); ++i) {
    if (datasets_[i].close() < 0 && failed.empty()) {
      failed = contents_.datasets[i].name + " (HDF5: " + error_stack_text() + ")";
    }
  }
  types_.clear();
  const herr_t status = file_.close();
  if (!failed.empty()) throw IoError("hdf5: close " + path_ + ", dataset " + failed);
  check(status, Where{"close", path_});
}

}  // namespace ckpt::backends::hdf5
