# SPDX-License-Identifier: Apache-2.0
# Every source of a shipped fact that names a JSON file of this repository (models/..., tests/...,
# docs/..., scenarios/...) names one that exists, and where it adds a JSON pointer
# ("models/measured/x.json:/points/359"), the pointer resolves in that file. A measurement renamed
# or re-run with fewer points must not leave facts pointing at nothing.
# Usage: cmake -DROOT=<repository> -P sources_resolve.cmake
cmake_minimum_required(VERSION 3.19)
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/models/*.json ${ROOT}/scenarios/*.json)
set(checked 0)
set(bad "")
foreach(f ${files})
  file(READ ${ROOT}/${f} text)
  string(REGEX MATCHALL "(models|tests|docs|scenarios)/[A-Za-z0-9_./-]+\\.json(:/[A-Za-z0-9_/]+)?" refs "${text}")
  list(REMOVE_DUPLICATES refs)
  foreach(ref ${refs})
    string(REGEX REPLACE ":/.*" "" target "${ref}")
    if(NOT EXISTS ${ROOT}/${target})
      string(APPEND bad "${f}: source names ${target}, which does not exist\n")
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    if(ref MATCHES ":/(.*)$")
      string(REPLACE "/" ";" keys "${CMAKE_MATCH_1}")
      if(NOT DEFINED content_${target})
        file(READ ${ROOT}/${target} content_${target})
      endif()
      string(JSON value ERROR_VARIABLE err GET "${content_${target}}" ${keys})
      if(err)
        string(APPEND bad "${f}: source names ${ref}, but /${CMAKE_MATCH_1} is not in ${target} (${err})\n")
      endif()
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "sources that point at nothing:\n${bad}")
endif()
# 58 references on 2026-12-01: far fewer means the pattern above no longer matches how sources
# name files, and the test would pass having checked nothing.
if(checked LESS 40)
  message(FATAL_ERROR "only ${checked} file references found in the sources of models/ and scenarios/ (58 on 2026-12-01): does the pattern still match?")
endif()
message(STATUS "${checked} file references in the sources of models/ and scenarios/ resolve")
