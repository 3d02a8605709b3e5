# SPDX-License-Identifier: MIT
# `vtrain explore` under mpirun equals a single process: the CSV byte for byte, the JSON summary
# (counts, examples, front, top lists) once the timing and worker fields are dropped, and the CSV parts
# concatenated; a failing rank fails the run with its message and leaves no complete-looking output.
# Arguments: -DVTRAIN=... -DMPIEXEC=... -DNP_FLAG=... -DRANKS=... -DSCENARIO=... -DWORK=... [-DPREFLAGS=...]
cmake_minimum_required(VERSION 3.24)

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
separate_arguments(preflags UNIX_COMMAND "${PREFLAGS}")
set(mpirun ${MPIEXEC} ${NP_FLAG} ${RANKS} ${preflags})

function(run name expected_ok)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${name}_rc "${rc}" PARENT_SCOPE)
  set(${name}_out "${out}" PARENT_SCOPE)
  set(${name}_err "${err}" PARENT_SCOPE)
  if(expected_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

# The summary without what depends on how it ran.
function(summary file out)
  file(READ "${file}" json)
  foreach(key elapsed_s threads ranks distributed)
    string(JSON json ERROR_VARIABLE ignored REMOVE "${json}" ${key})
  endforeach()
  set(${out} "${json}" PARENT_SCOPE)
endfunction()

run(single TRUE "${VTRAIN}" explore "${SCENARIO}" --csv single.csv --json single.json --top 7 --threads 1)
run(mpi TRUE ${mpirun} "${VTRAIN}" explore "${SCENARIO}" --csv mpi.csv --json mpi.json --top 7 --threads 1)
if(NOT mpi_out MATCHES "on ${RANKS} ranks x 1 thread")
  message(FATAL_ERROR "the run was not distributed over ${RANKS} ranks:\n${mpi_out}")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/single.csv" "${WORK}/mpi.csv" RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "the ${RANKS}-rank CSV differs from the single-process CSV (${WORK})")
endif()
summary("${WORK}/single.json" single_summary)
summary("${WORK}/mpi.json" mpi_summary)
string(JSON front_size LENGTH "${single_summary}" front)
string(JSON rejected_reasons LENGTH "${single_summary}" rejected)
if(front_size LESS 2 OR rejected_reasons LESS 4)
  message(FATAL_ERROR "the scenario is too small to test anything: front ${front_size}, reasons ${rejected_reasons}")
endif()
if(NOT single_summary STREQUAL mpi_summary)
  message(FATAL_ERROR "the ${RANKS}-rank summary differs from the single-process one:\n${single_summary}\n---\n${mpi_summary}")
endif()

# Parts: each a CSV with the header and its rows in index order; all parts' rows ordered by index
# are the single CSV's rows.
run(parts TRUE ${mpirun} "${VTRAIN}" explore "${SCENARIO}" --csv-parts parts --top 7 --threads 1)
file(READ "${WORK}/parts/manifest.json" manifest)
string(JSON part_count LENGTH "${manifest}" parts)
if(NOT part_count EQUAL RANKS)
  message(FATAL_ERROR "the manifest lists ${part_count} parts, not ${RANKS}")
endif()
file(STRINGS "${WORK}/single.csv" expected)
list(POP_FRONT expected header)
set(rows "")
set(listed_rows 0)
math(EXPR last "${part_count} - 1")
foreach(i RANGE ${last})
  string(JSON file GET "${manifest}" parts ${i} file)
  string(JSON part_rows GET "${manifest}" parts ${i} rows)
  math(EXPR listed_rows "${listed_rows} + ${part_rows}")
  file(STRINGS "${WORK}/parts/${file}" part)
  list(POP_FRONT part part_header)
  if(NOT part_header STREQUAL header)
    message(FATAL_ERROR "${file} has another header: ${part_header}")
  endif()
  list(LENGTH part part_length)
  if(NOT part_length EQUAL part_rows)
    message(FATAL_ERROR "${file}: ${part_length} rows, the manifest says ${part_rows}")
  endif()
  list(APPEND rows ${part})
endforeach()
list(SORT rows COMPARE NATURAL) # by the leading index
if(NOT rows STREQUAL expected)
  message(FATAL_ERROR "the CSV parts' rows by index differ from the single-process CSV (${WORK}/parts)")
endif()

# A rank that fails after its sweep: the run fails loudly, and no output claims to be complete.
run(failing FALSE ${CMAKE_COMMAND} -E env VTRAIN_TEST_FAIL_RANK=1 ${mpirun} -x VTRAIN_TEST_FAIL_RANK "${VTRAIN}" explore "${SCENARIO}"
    --csv failed.csv --threads 1)
if(failing_rc EQUAL 0 OR NOT failing_err MATCHES "rank 1 of ${RANKS} failed: failure injected")
  message(FATAL_ERROR "a failing rank did not fail the run (${failing_rc}):\n${failing_out}\n${failing_err}")
endif()
if(EXISTS "${WORK}/failed.csv")
  message(FATAL_ERROR "a failed run left failed.csv as if complete")
endif()
run(failing_parts FALSE ${CMAKE_COMMAND} -E env VTRAIN_TEST_FAIL_RANK=0 ${mpirun} -x VTRAIN_TEST_FAIL_RANK "${VTRAIN}" explore "${SCENARIO}"
    --csv-parts failed-parts --threads 1)
if(failing_parts_rc EQUAL 0 OR EXISTS "${WORK}/failed-parts/manifest.json")
  message(FATAL_ERROR "a failed run wrote a manifest or exited 0 (${failing_parts_rc})")
endif()

# Bad input is reported once (by the lowest failing rank) with exit status 2.
run(bad FALSE ${mpirun} "${VTRAIN}" explore "${WORK}/missing.json")
string(REGEX MATCHALL "cannot be opened" reports "${bad_err}")
list(LENGTH reports report_count)
if(NOT bad_rc EQUAL 2 OR NOT report_count EQUAL 1)
  message(FATAL_ERROR "bad input: status ${bad_rc}, reported ${report_count} times:\n${bad_err}")
endif()
message(STATUS "${RANKS} ranks equal one process: CSV, summary, CSV parts; failures fail the run")
