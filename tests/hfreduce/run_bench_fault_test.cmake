# SPDX-License-Identifier: Apache-2.0
# Runs hfreduce-bench under mpirun with a fault and checks that the run ends, in time, with the
# expected exit status and messages (never a hang).
# Inputs: MPIEXEC; ARGS (a ;-list: everything after mpirun, the bench and its options included);
# RC ("any", "nonzero" or a number: mpirun's exit status); EXPECT (a ;-list of regexes, each must match
# stdout + stderr); SURVIVORS (optional: how many lines must match SURVIVOR_REGEX); LIMIT (seconds
# the whole run may take before it counts as a hang); MAX_ELAPSED (seconds it may take to pass,
# derived in CMakeLists.txt from the bench's --timeout).
string(TIMESTAMP start "%s")
execute_process(
  COMMAND ${MPIEXEC} ${ARGS}
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  RESULT_VARIABLE rc
  TIMEOUT ${LIMIT})
string(TIMESTAMP stop "%s")
math(EXPR elapsed "${stop} - ${start}")
set(all "${out}\n${err}")
message("mpirun exit: ${rc}, ${elapsed} s (limit ${LIMIT} s)\n--- output (tail)")
string(LENGTH "${all}" length)
if(length GREATER 6000)
  math(EXPR from "${length} - 6000")
  string(SUBSTRING "${all}" ${from} 6000 tail)
else()
  set(tail "${all}")
endif()
message("${tail}")
if(rc MATCHES "timeout|Process terminated")
  message(FATAL_ERROR "the run did not end within ${LIMIT} s: a hang")
endif()
if(DEFINED MAX_ELAPSED AND elapsed GREATER MAX_ELAPSED)
  message(FATAL_ERROR "the run took ${elapsed} s, more than ${MAX_ELAPSED} s")
endif()
if(RC STREQUAL "any")
elseif(RC STREQUAL "nonzero")
  if(rc EQUAL 0)
    message(FATAL_ERROR "expected a non-zero exit, got 0")
  endif()
elseif(NOT rc EQUAL RC)
  message(FATAL_ERROR "expected exit ${RC}, got ${rc}")
endif()
foreach(regex IN LISTS EXPECT)
  if(NOT all MATCHES "${regex}")
    message(FATAL_ERROR "output lacks /${regex}/")
  endif()
endforeach()
if(DEFINED SURVIVORS)
  string(REGEX MATCHALL "${SURVIVOR_REGEX}" found "${all}")
  list(LENGTH found n)
  if(NOT n EQUAL SURVIVORS)
    message(FATAL_ERROR "expected ${SURVIVORS} survivors to report /${SURVIVOR_REGEX}/, got ${n}")
  endif()
endif()
