#pragma once

#include <hdf5.h>

#include <string>
#include <string_view>

namespace ckpt::backends::hdf5 {

// Where an HDF5 call failed: the operation ("create file", "write"), the file path and, when
// the call concerns one, the dataset.
struct Where {
  std::string_view operation;
  const std::string& path;
  std::string_view dataset = {};
};

// Turns HDF5's automatic error printing off on this thread while it lives and restores the
// previous handler afterwards, so that failures reach the caller as IoError text instead of
// stderr noise.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

// The messages on HDF5's default error stack, outermost call first, "; "-separated.
std::string error_stack_text();

// Throws IoError "hdf5: <operation> <path>[, dataset <name>]: <error stack>[: detail]".
[[noreturn]] void fail(const Where& where, std::string_view detail = {});

// The id, or IoError with the context and the error stack when it is negative.
hid_t check(hid_t id, const Where& where);
// Nothing, or IoError with the context and the error stack when `status` is negative.
void check(herr_t status, const Where& where);

}  // namespace ckpt::backends::hdf5
