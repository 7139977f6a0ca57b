#include "backends/mpi_common/mpi_error.hpp"

#include <mpi.h>

#include "backends/backend.hpp"

namespace ckpt::backends::mpi {
namespace {

// MPI_Error_string, or a fallback when the code is not one the library knows.
std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS || length <= 0) {
    return "unknown MPI error code " + std::to_string(code);
  }
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace

std::string mpi_error_text(int code) {
  std::string text = error_string(code);
  int error_class = 0;
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) return text;
  text += " (MPI error class " + std::to_string(error_class);
  // An implementation-specific code names its class too, so that the message says what kind of
  // failure it was even when the code's own text is vague.
  if (error_class != code) text += ": " + error_string(error_class);
  return text + ")";
}

void check_mpi(int code, std::string_view backend, std::string_view operation,
               const std::string& path) {
  if (code == MPI_SUCCESS) return;
  throw IoError(std::string(backend) + ": " + std::string(operation) + " " + path + ": " +
                mpi_error_text(code));
}

}  // namespace ckpt::backends::mpi
