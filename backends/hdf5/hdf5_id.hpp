#pragma once

#include <hdf5.h>

#include <utility>

namespace ckpt::backends::hdf5 {

// Owns one HDF5 identifier and closes it with Close (H5Fclose, H5Dclose, ...). Move-only; an
// invalid id (negative) owns nothing. Closing in the destructor ignores errors: the paths that
// must report a failed close (files, datasets) call close() themselves first.
template <herr_t (*Close)(hid_t)>
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}
  ~Id() { reset(); }
  Id(Id&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Id& operator=(Id&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

  // Closes now and returns what the close returned (0 when nothing was owned).
  herr_t close() { return id_ >= 0 ? Close(std::exchange(id_, H5I_INVALID_HID)) : 0; }

 private:
  void reset() {
    if (id_ >= 0) (void)Close(std::exchange(id_, H5I_INVALID_HID));
  }

  hid_t id_ = H5I_INVALID_HID;
};

using FileId = Id<H5Fclose>;
using DatasetId = Id<H5Dclose>;
using SpaceId = Id<H5Sclose>;
using PlistId = Id<H5Pclose>;
using TypeId = Id<H5Tclose>;
using AttributeId = Id<H5Aclose>;
using GroupId = Id<H5Gclose>;

}  // namespace ckpt::backends::hdf5
