# One way to declare and settle an optional dependency: a cache option AUTO/ON/OFF.
#   AUTO builds the feature when its dependency is found and says why not otherwise;
#   ON requires it (configuration fails loudly, naming what is missing);
#   OFF leaves it out.

# Declares the cache option `name` (default AUTO).
function(ckpt_auto_option name help)
  set(${name} AUTO CACHE STRING "${help} (AUTO: when found; ON: required; OFF)")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
endfunction()

# Sets `out` to TRUE unless option `name` is OFF (then the dependency need not be looked for).
function(ckpt_option_wanted name out)
  string(TOUPPER "${${name}}" choice)
  if(choice STREQUAL "OFF" OR choice STREQUAL "FALSE" OR choice STREQUAL "NO" OR choice STREQUAL "0")
    set(${out} FALSE PARENT_SCOPE)
  else()
    set(${out} TRUE PARENT_SCOPE)
  endif()
endfunction()

# Settles option `name`: `found` says whether the dependency is there, `missing` what is missing
# and how to install it, `what` names the feature in messages. Sets, in the caller's scope,
# `<name>_ENABLED` (ON/OFF) and `<name>_MISSING` (why it is off: "" when enabled or OFF).
function(ckpt_settle_option name found what missing)
  ckpt_option_wanted(${name} wanted)
  string(TOUPPER "${${name}}" choice)
  set(enabled OFF)
  set(why "")
  if(NOT wanted)
    message(STATUS "ckptbench: ${what} not built (${name}=OFF)")
  elseif(found)
    set(enabled ON)
  elseif(choice STREQUAL "AUTO")
    set(why "${missing}")
    message(STATUS "ckptbench: ${what} not built: missing ${missing}")
  else()
    message(FATAL_ERROR "${name}=${${name}}: ${what} needs ${missing}; install it and reconfigure, or set "
                        "${name}=AUTO or OFF")
  endif()
  set(${name}_ENABLED ${enabled} PARENT_SCOPE)
  set(${name}_MISSING "${why}" PARENT_SCOPE)
endfunction()
