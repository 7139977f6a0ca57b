# Included by backends/CMakeLists.txt when CKPT_BACKEND_HDF5 is not OFF: sets `found` and
# `missing`. It needs MPI and a parallel HDF5 C library (Debian: libhdf5-openmpi-dev), found with
# HDF5_PREFER_PARALLEL; the harness must initialise MPI, so CKPT_WITH_MPI=OFF leaves it out too.
set(found FALSE)
if(NOT CKPT_WITH_MPI_ENABLED)
  set(missing "MPI (CKPT_WITH_MPI=${CKPT_WITH_MPI} found none; install libopenmpi-dev, keep CKPT_WITH_MPI at AUTO or ON)")
else()
  set(HDF5_PREFER_PARALLEL TRUE)
  find_package(HDF5 QUIET COMPONENTS C)
  if(NOT HDF5_FOUND)
    set(missing "the HDF5 C library (install libhdf5-openmpi-dev)")
  elseif(NOT HDF5_IS_PARALLEL)
    set(missing "a parallel HDF5: HDF5 ${HDF5_VERSION} is serial (install libhdf5-openmpi-dev)")
  else()
    set(found TRUE)
    message(STATUS "ckptbench: hdf5 backend with parallel HDF5 ${HDF5_VERSION} and MPI ${MPI_C_VERSION}")
  endif()
endif()
