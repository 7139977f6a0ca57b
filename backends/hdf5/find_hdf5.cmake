# Included by backends/CMakeLists.txt: decides whether the hdf5 backend is built. It needs MPI
# and a parallel HDF5 C library (Debian: libhdf5-openmpi-dev), found with HDF5_PREFER_PARALLEL.
# Sets hdf5_build (ON/OFF) and hdf5_not_found: 0, or why AUTO left it out (1: no MPI or
# CKPT_WITH_MPI=OFF, 2: no HDF5, 3: a serial HDF5 only), which the registry turns into text.
set(CKPT_BACKEND_HDF5 AUTO CACHE STRING
    "Build the hdf5 backend (parallel HDF5 over MPI-IO; AUTO: when parallel HDF5 and MPI are found; ON: required; OFF)")
set_property(CACHE CKPT_BACKEND_HDF5 PROPERTY STRINGS AUTO ON OFF)

string(TOUPPER "${CKPT_BACKEND_HDF5}" hdf5_choice)
string(TOUPPER "${CKPT_WITH_MPI}" hdf5_with_mpi)
set(hdf5_build OFF)
set(hdf5_not_found 0)
if(CKPT_BACKEND_HDF5 AND NOT hdf5_choice STREQUAL "OFF")
  set(hdf5_missing "")
  if(hdf5_with_mpi STREQUAL "OFF")
    set(hdf5_not_found 1)
    set(hdf5_missing "MPI (CKPT_WITH_MPI=OFF; set it to AUTO or ON)")
  else()
    if(NOT MPI_C_FOUND)
      find_package(MPI QUIET COMPONENTS C)  # already found by the top level, unless built on its own
    endif()
    set(HDF5_PREFER_PARALLEL TRUE)
    find_package(HDF5 QUIET COMPONENTS C)
    if(NOT MPI_C_FOUND)
      set(hdf5_not_found 1)
      set(hdf5_missing "MPI (install libopenmpi-dev)")
    elseif(NOT HDF5_FOUND)
      set(hdf5_not_found 2)
      set(hdf5_missing "the HDF5 C library (install libhdf5-openmpi-dev)")
    elseif(NOT HDF5_IS_PARALLEL)
      set(hdf5_not_found 3)
      set(hdf5_missing "a parallel HDF5: HDF5 ${HDF5_VERSION} is serial (install libhdf5-openmpi-dev)")
    endif()
  endif()
  if(hdf5_not_found EQUAL 0)
    set(hdf5_build ON)
    message(STATUS "ckptbench: hdf5 backend with parallel HDF5 ${HDF5_VERSION} and MPI ${MPI_C_VERSION}")
  elseif(hdf5_choice STREQUAL "AUTO")
    message(STATUS "ckptbench: hdf5 backend not built: missing ${hdf5_missing}")
  else()
    message(FATAL_ERROR "CKPT_BACKEND_HDF5=${CKPT_BACKEND_HDF5}: missing ${hdf5_missing}; "
                        "install it and reconfigure, or set CKPT_BACKEND_HDF5=AUTO or OFF")
  endif()
endif()
