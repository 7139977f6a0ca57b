# Included by backends/CMakeLists.txt when CKPT_BACKEND_GDS is not OFF: sets `found` and
# `missing`. The backend compiles against cuda.h (the CUDA toolkit) and cufile.h (the
# nvidia-cufile wheel that ci/setup.sh puts into .deps/cufile, or a toolkit that ships it) and
# links neither library: libcufile and libcuda are loaded at run time, so the binary also runs
# where they are absent. Sets CKPT_CUFILE_INCLUDE_DIR.
set(CKPT_CUFILE_ROOT "${CKPT_BACKENDS_INCLUDE_ROOT}/.deps/cufile" CACHE PATH
    "Where cufile.h is looked for first (ci/setup.sh installs the nvidia-cufile wheel there)")
find_package(CUDAToolkit QUIET)
set(gds_cufile_hints ${CKPT_CUFILE_ROOT})
if(CUDAToolkit_FOUND)
  list(APPEND gds_cufile_hints ${CUDAToolkit_INCLUDE_DIRS})
endif()
find_path(CKPT_CUFILE_INCLUDE_DIR cufile.h HINTS ${gds_cufile_hints}
          PATH_SUFFIXES nvidia/cu13/include nvidia/cufile/include include)
set(found FALSE)
set(missing "")
if(NOT CUDAToolkit_FOUND)
  string(APPEND missing "the CUDA toolkit (cuda.h) ")
endif()
if(NOT CKPT_CUFILE_INCLUDE_DIR)
  string(APPEND missing "cufile.h (ci/setup.sh installs the nvidia-cufile wheel into .deps/cufile; or set CKPT_CUFILE_ROOT)")
endif()
if(CUDAToolkit_FOUND AND CKPT_CUFILE_INCLUDE_DIR)
  set(found TRUE)
  message(STATUS "ckptbench: gds backend with cufile.h from ${CKPT_CUFILE_INCLUDE_DIR} and CUDA "
                 "${CUDAToolkit_VERSION} headers (libcufile and libcuda loaded at run time)")
endif()
