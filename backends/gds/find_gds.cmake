# Included by backends/CMakeLists.txt: decides whether the gds backend is built. It compiles
# against cuda.h (the CUDA toolkit) and cufile.h (the nvidia-cufile wheel that ci/setup.sh puts
# into .deps/cufile, or a toolkit that ships it) and links neither library: libcufile and libcuda
# are loaded at run time, so the binary also runs where they are absent.
# Sets gds_build (ON/OFF), gds_not_found (1 when AUTO found no headers) and CKPT_CUFILE_INCLUDE_DIR.
set(CKPT_BACKEND_GDS AUTO CACHE STRING
    "Build the gds backend (GPUDirect Storage through cuFile, loaded at run time; AUTO: when cuda.h and cufile.h are found; ON: required; OFF)")
set_property(CACHE CKPT_BACKEND_GDS PROPERTY STRINGS AUTO ON OFF)
set(CKPT_CUFILE_ROOT "${CKPT_BACKENDS_INCLUDE_ROOT}/.deps/cufile" CACHE PATH
    "Where cufile.h is looked for first (ci/setup.sh installs the nvidia-cufile wheel there)")

string(TOUPPER "${CKPT_BACKEND_GDS}" gds_choice)
set(gds_build OFF)
set(gds_not_found 0)
if(CKPT_BACKEND_GDS AND NOT gds_choice STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  set(gds_cufile_hints ${CKPT_CUFILE_ROOT})
  if(CUDAToolkit_FOUND)
    list(APPEND gds_cufile_hints ${CUDAToolkit_INCLUDE_DIRS})
  endif()
  find_path(CKPT_CUFILE_INCLUDE_DIR cufile.h
            HINTS ${gds_cufile_hints}
            PATH_SUFFIXES nvidia/cu13/include nvidia/cufile/include include)
  if(CUDAToolkit_FOUND AND CKPT_CUFILE_INCLUDE_DIR)
    set(gds_build ON)
    message(STATUS "ckptbench: gds backend with cufile.h from ${CKPT_CUFILE_INCLUDE_DIR} and "
                   "CUDA ${CUDAToolkit_VERSION} headers (libcufile and libcuda loaded at run time)")
  else()
    set(gds_missing "")
    if(NOT CUDAToolkit_FOUND)
      string(APPEND gds_missing " the CUDA toolkit (cuda.h)")
    endif()
    if(NOT CKPT_CUFILE_INCLUDE_DIR)
      string(APPEND gds_missing " cufile.h (ci/setup.sh installs the nvidia-cufile wheel into .deps/cufile)")
    endif()
    if(gds_choice STREQUAL "AUTO")
      set(gds_not_found 1)
      message(STATUS "ckptbench: gds backend not built: missing${gds_missing}")
    else()
      message(FATAL_ERROR "CKPT_BACKEND_GDS=${CKPT_BACKEND_GDS}: missing${gds_missing}; "
                          "run ci/setup.sh or set CKPT_CUFILE_ROOT, or set CKPT_BACKEND_GDS=AUTO or OFF")
    endif()
  endif()
endif()
