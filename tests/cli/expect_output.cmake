# SPDX-License-Identifier: Apache-2.0
# Runs a command and compares its exit code and (optionally) its whole stderr with an expected file.
# -DCMD="a|b|c" (arguments separated by |)  -DWORKDIR=dir  -DEXPECT_RC=n  [-DEXPECT_STDERR_FILE=f]
# [-DEXPECT_STDERR_REGEX=r]  [-DEXPECT_STDOUT_REGEX=r]
string(REPLACE "|" ";" CMD "${CMD}")
execute_process(COMMAND ${CMD} WORKING_DIRECTORY ${WORKDIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\n--- stdout\n${out}--- stderr\n${err}")
endif()
if(DEFINED EXPECT_STDERR_FILE)
  file(READ ${EXPECT_STDERR_FILE} expected)
  if(NOT err STREQUAL expected)
    message(FATAL_ERROR "stderr differs\n--- got\n${err}--- expected\n${expected}")
  endif()
endif()
if(DEFINED EXPECT_STDERR_REGEX)
  if(NOT err MATCHES "${EXPECT_STDERR_REGEX}")
    message(FATAL_ERROR "stderr does not match ${EXPECT_STDERR_REGEX}\n--- stderr\n${err}")
  endif()
endif()
if(DEFINED EXPECT_STDOUT_REGEX)
  if(NOT out MATCHES "${EXPECT_STDOUT_REGEX}")
    message(FATAL_ERROR "stdout does not match ${EXPECT_STDOUT_REGEX}\n--- stdout\n${out}")
  endif()
endif()
