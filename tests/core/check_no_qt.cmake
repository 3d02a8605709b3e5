# SPDX-License-Identifier: MIT
# Fails if any file under DIR includes a Qt header.
file(GLOB_RECURSE files "${DIR}/*.h" "${DIR}/*.cpp")
foreach(f IN LISTS files)
  file(STRINGS "${f}" hits REGEX "#include[ \t]*[<\"]Q")
  if(hits)
    message(FATAL_ERROR "${f} includes Qt: ${hits}")
  endif()
endforeach()
list(LENGTH files n)
message(STATUS "checked ${n} files: no Qt includes in core/")
