# SPDX-License-Identifier: Apache-2.0
# Runs `hfreduce_mpi_test kill` under mpirun and passes when every rank but the killed one
# reported "timeout-ok" (a TimeoutError within the configured time).
# Inputs: MPIEXEC, NP, EXE, FLAGS (a ;-list of mpirun flags).
execute_process(
  COMMAND ${MPIEXEC} ${FLAGS} -np ${NP} ${EXE} kill --np ${NP}
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  RESULT_VARIABLE rc
  TIMEOUT 120)
message("${out}")
string(REGEX MATCHALL "rank [0-9]+ timeout-ok" survivors "${out}")
list(LENGTH survivors reported)
math(EXPR expected "${NP} - 1")
if(NOT reported EQUAL expected)
  message(FATAL_ERROR "expected ${expected} surviving ranks to report timeout-ok, got ${reported} (mpirun: ${rc})\n${err}")
endif()
