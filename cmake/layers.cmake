# The harness's layers as libraries, from the one table cmake/layers.txt: each layer's library
# ckpt_<layer> links exactly the lower layers its line names, so the link graph is the table's.

# The libraries of the layers `layer` may use directly (ckpt_<name> for each name on its line).
function(ckpt_layer_uses layer out)
  file(STRINGS ${PROJECT_SOURCE_DIR}/cmake/layers.txt lines)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "#.*" "" line "${line}")
    if(line MATCHES "^ *([a-z_]+) +[^:]*:(.*)$" AND CMAKE_MATCH_1 STREQUAL layer)
      string(STRIP "${CMAKE_MATCH_2}" names)
      separate_arguments(names UNIX_COMMAND "${names}")
      list(TRANSFORM names PREPEND ckpt_)
      set(${out} ${names} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "cmake/layers.txt declares no layer `${layer}`")
endfunction()

# ckpt_layer(NAME [EXCLUDE file...] [SOURCES file...]): the static library ckpt_NAME of every
# .cpp of harness/NAME/ (less EXCLUDE, plus SOURCES), linking the layers cmake/layers.txt allows.
function(ckpt_layer name)
  cmake_parse_arguments(arg "" "" "EXCLUDE;SOURCES" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp)
  foreach(excluded IN LISTS arg_EXCLUDE)
    list(REMOVE_ITEM sources ${CMAKE_CURRENT_SOURCE_DIR}/${name}/${excluded})
  endforeach()
  add_library(ckpt_${name} STATIC ${sources} ${arg_SOURCES})
  target_include_directories(ckpt_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  ckpt_layer_uses(${name} uses)
  target_link_libraries(ckpt_${name} PUBLIC ${uses} nlohmann_json::nlohmann_json fmt::fmt PRIVATE ckpt_warnings)
endfunction()
