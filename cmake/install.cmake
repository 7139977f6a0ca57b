# `cmake --install`: the program, the model zoo and the example campaigns as data, and a man page
# generated at build time from the program's own --help (help2man). Included from the top-level
# CMakeLists.txt after the harness, so the ckptbench target exists.
include(GNUInstallDirs)

set(CKPT_MAN_PAGE AUTO CACHE STRING
    "Generate and install the man page ckptbench.1 from --help (AUTO: when help2man is found; ON: required; OFF)")
set_property(CACHE CKPT_MAN_PAGE PROPERTY STRINGS AUTO ON OFF)

set(CKPT_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/ckptbench)

# The build tree's RUNPATH (Debian's MPI and HDF5 directories, a cluster's modules) would be
# dropped on install; the installed program must find the same libraries as the built one.
set_target_properties(ckptbench PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ckptbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The zoo is also built into the program; the files are there to copy for --model FILE.toml.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/workloads/zoo/ DESTINATION ${CKPT_INSTALL_DATADIR}/zoo
        FILES_MATCHING PATTERN "*.toml")
# All of configs/: the campaigns, cluster/ (the Slurm script keeps its execute bit) and the
# README and results notes the campaigns link to.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CKPT_INSTALL_DATADIR}/configs
        USE_SOURCE_PERMISSIONS)

set(CKPT_HAVE_MAN_PAGE OFF)
if(NOT CKPT_MAN_PAGE STREQUAL "OFF")
  find_program(CKPT_HELP2MAN help2man)
  if(CKPT_HELP2MAN)
    set(CKPT_HAVE_MAN_PAGE ON)
  elseif(CKPT_MAN_PAGE STREQUAL "ON")
    message(FATAL_ERROR "CKPT_MAN_PAGE=ON but help2man was not found: install it (Debian: apt-get install "
                        "help2man), point -DCKPT_HELP2MAN at it, or configure with -DCKPT_MAN_PAGE=OFF")
  endif()
endif()
if(CKPT_HAVE_MAN_PAGE)
  set(ckpt_man_page ${PROJECT_BINARY_DIR}/man/ckptbench.1)
  add_custom_command(
    OUTPUT ${ckpt_man_page}
    COMMAND ${CMAKE_COMMAND} -DCKPTBENCH=$<TARGET_FILE:ckptbench> -DHELP2MAN=${CKPT_HELP2MAN}
            -DDATADIR=${CKPT_INSTALL_DATADIR} -DOUTPUT=${ckpt_man_page} -P ${CMAKE_CURRENT_LIST_DIR}/man_page.cmake
    DEPENDS ckptbench ${CMAKE_CURRENT_LIST_DIR}/man_page.cmake
    COMMENT "Generating the man page ckptbench.1 (help2man)"
    VERBATIM)
  add_custom_target(ckpt_man_page ALL DEPENDS ${ckpt_man_page})
  install(FILES ${ckpt_man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  message(STATUS "ckptbench: help2man found (${CKPT_HELP2MAN}); the man page ckptbench.1 is built and installed")
elseif(CKPT_MAN_PAGE STREQUAL "OFF")
  message(STATUS "ckptbench: no man page (CKPT_MAN_PAGE=OFF)")
else()
  message(STATUS "ckptbench: help2man not found; no man page is built or installed (Debian: apt-get install help2man)")
endif()
