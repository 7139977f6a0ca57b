# Included by backends/CMakeLists.txt when CKPT_BACKEND_MPIIO is not OFF: sets `found` and
# `missing`. The harness must initialise MPI for it, so CKPT_WITH_MPI=OFF leaves it out too.
if(NOT MPI_C_FOUND AND CKPT_WITH_MPI_ENABLED)
  find_package(MPI QUIET COMPONENTS C)  # found by the top level already, unless built on its own
endif()
set(found FALSE)
if(MPI_C_FOUND AND CKPT_WITH_MPI_ENABLED)
  set(found TRUE)
  message(STATUS "ckptbench: mpiio backend with MPI ${MPI_C_VERSION}")
endif()
set(missing "MPI (install libopenmpi-dev or an MPICH, keep CKPT_WITH_MPI at AUTO or ON)")
