#include "backends/hdf5/hdf5_error.hpp"

#include <algorithm>
#include <array>

#include "backends/backend.hpp"

namespace ckpt::backends::hdf5 {
namespace {

// HDF5's text for a major or minor error class, or "" when it has none.
std::string message_of(hid_t message_id) {
  std::array<char, 256> text{};
  H5E_type_t type{};
  if (H5Eget_msg(message_id, &type, text.data(), text.size()) <= 0) return "";
  return text.data();
}

herr_t collect(unsigned /*n*/, const H5E_error2_t* entry, void* client_data) {
  auto& text = *static_cast<std::string*>(client_data);
  if (!text.empty()) text += "; ";
  text += entry->func_name != nullptr ? entry->func_name : "?";
  text += ": ";
  std::string description =
      entry->desc != nullptr && *entry->desc != '\0' ? entry->desc : message_of(entry->min_num);
  std::replace(description.begin(), description.end(), '\n', ' ');  // H5F_open's text spans lines
  text += description;
  return 0;
}

}  // namespace

QuietErrors::QuietErrors() {
  (void)H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
  (void)H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() {
  (void)H5Eset_auto2(H5E_DEFAULT, function_, data_);
}

std::string error_stack_text() {
  std::string text;
  (void)H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, &collect, &text);
  return text;
}

void fail(const Where& where, std::string_view detail) {
  std::string message = "hdf5: " + std::string(where.operation) + " " + where.path;
  if (!where.dataset.empty()) message += ", dataset " + std::string(where.dataset);
  const std::string stack = error_stack_text();
  if (!detail.empty()) message += ": " + std::string(detail);
  if (!stack.empty()) message += " (HDF5: " + stack + ")";
  (void)H5Eclear2(H5E_DEFAULT);
  throw IoError(message);
}

hid_t check(hid_t id, const Where& where) {
  if (id < 0) fail(where);
  return id;
}

void check(herr_t status, const Where& where) {
  if (status < 0) fail(where);
}

}  // namespace ckpt::backends::hdf5
