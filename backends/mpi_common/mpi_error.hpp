#pragma once

#include <string>
#include <string_view>

namespace ckpt::backends::mpi {

// The MPI library's text for an error code, with its error class:
// "MPI_ERR_NO_SUCH_FILE: no such file or directory (MPI error class 42)". Needs MPI initialised.
std::string mpi_error_text(int code);

// Throws IoError("<backend>: <operation> <path>: <mpi_error_text(code)>") when code is not
// MPI_SUCCESS. For calls on files opened with MPI_ERRORS_RETURN (the default for files) and on
// communicators whose error handler returns.
void check_mpi(int code, std::string_view backend, std::string_view operation,
               const std::string& path);

}  // namespace ckpt::backends::mpi
