# SPDX-License-Identifier: Apache-2.0
# docs/schema/*.json are what `ffsim schema` learns from the readers now: a key added to (or taken
# from) a reader, a catalog entry or a shipped scenario shows up here until the schema is rewritten.
# Usage: cmake -DFFSIM=<ffsim> -DROOT=<repository> -DOUT=<scratch folder> -P schema_up_to_date.cmake
cmake_minimum_required(VERSION 3.19)
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
file(GLOB scenarios RELATIVE ${ROOT} ${ROOT}/scenarios/*.json)
list(SORT scenarios)
execute_process(COMMAND ${FFSIM} --models models schema --out ${OUT} ${scenarios} WORKING_DIRECTORY ${ROOT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "ffsim schema failed (${rc})\n${out}${err}")
endif()
foreach(name scenario.schema.json model.schema.json)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/${name} ${ROOT}/docs/schema/${name} RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "docs/schema/${name} is not what the readers produce: run\n"
                        "  ffsim schema --out docs/schema scenarios/*.json\nand commit the result")
  endif()
endforeach()
