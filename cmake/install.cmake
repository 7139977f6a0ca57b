# `cmake --install`: the program, the model zoo and the example campaigns as data, and a man page
# generated at build time from the program's own --help (help2man). Included from the top-level
# CMakeLists.txt after the harness, so the ckptbench target exists.
include(GNUInstallDirs)

ckpt_auto_option(CKPT_MAN_PAGE "Generate and install the man page ckptbench.1 from --help with help2man")

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

ckpt_option_wanted(CKPT_MAN_PAGE man_page_wanted)
if(man_page_wanted)
  find_program(CKPT_HELP2MAN help2man)
endif()
ckpt_settle_option(CKPT_MAN_PAGE "${CKPT_HELP2MAN}" "the man page ckptbench.1"
                   "help2man (Debian: apt-get install help2man, or point -DCKPT_HELP2MAN at it)")
set(CKPT_HAVE_MAN_PAGE ${CKPT_MAN_PAGE_ENABLED})
if(CKPT_HAVE_MAN_PAGE)
  set(ckpt_man_page ${PROJECT_BINARY_DIR}/man/ckptbench.1)
  add_custom_command(
    OUTPUT ${ckpt_man_page}
    COMMAND ${CMAKE_COMMAND} -DCKPTBENCH=$<TARGET_FILE:ckptbench> -DHELP2MAN=${CKPT_HELP2MAN}
            -DDATADIR=${CKPT_INSTALL_DATADIR} -DOUTPUT=${ckpt_man_page} -DVERSION=${PROJECT_VERSION} -P ${CMAKE_CURRENT_LIST_DIR}/man_page.cmake
    DEPENDS ckptbench ${CMAKE_CURRENT_LIST_DIR}/man_page.cmake
    COMMENT "Generating the man page ckptbench.1 (help2man)"
    VERBATIM)
  add_custom_target(ckpt_man_page ALL DEPENDS ${ckpt_man_page})
  install(FILES ${ckpt_man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  message(STATUS "ckptbench: help2man found (${CKPT_HELP2MAN}); the man page ckptbench.1 is built and installed")
endif()
