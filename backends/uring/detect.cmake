# Included by backends/CMakeLists.txt when CKPT_BACKEND_URING is not OFF: sets `found` and
# `missing` (see ckpt_settle_option). liburing through pkg-config (PkgConfig::LIBURING).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(LIBURING QUIET IMPORTED_TARGET GLOBAL liburing)
endif()
set(found ${LIBURING_FOUND})
set(missing "liburing (pkg-config found none; install liburing-dev and pkg-config)")
if(found)
  message(STATUS "ckptbench: uring backend with liburing ${LIBURING_VERSION}")
endif()
