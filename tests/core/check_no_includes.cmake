# SPDX-License-Identifier: MIT
# Fails if any file under DIR includes a header whose name matches PATTERN (a CMake regex matched right
# after `#include <` or `#include "`). WHAT names the dependency in the messages. core/ stays free of Qt
# (the GUI's business) and of MPI (only app/cli/mpi/ talks MPI; core splits and merges sweeps as values).
file(GLOB_RECURSE files "${DIR}/*.h" "${DIR}/*.cpp")
foreach(f IN LISTS files)
  file(STRINGS "${f}" hits REGEX "#include[ \t]*[<\"](${PATTERN})")
  if(hits)
    message(FATAL_ERROR "${f} includes ${WHAT}: ${hits}")
  endif()
endforeach()
list(LENGTH files n)
message(STATUS "checked ${n} files: no ${WHAT} includes in ${DIR}")
