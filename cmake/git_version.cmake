# SPDX-License-Identifier: Apache-2.0
# Writes OUT (the commit of ffsim's version string) from `git describe --always --dirty` of SRC,
# or "unknown" where SRC is not the top of a git checkout (a tarball, a copy). Run at configure
# time and again at every build (src/core/CMakeLists.txt), and configure_file() rewrites OUT only
# when the text changes: a new commit or an edit recompiles one file, an unchanged tree nothing.
# Usage: cmake -DSRC=<source dir> -DIN=<template> -DOUT=<file> -DVERSION=<x.y.z> -P git_version.cmake
set(FFSIM_GIT_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SRC} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  # Only SRC's own checkout: a source tree unpacked inside another repository is not that commit.
  if(rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SRC}" src_real)
  endif()
  if(rc EQUAL 0 AND top STREQUAL src_real)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SRC} describe --always --dirty
                    OUTPUT_VARIABLE described RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND NOT described STREQUAL "")
      set(FFSIM_GIT_COMMIT "${described}")
    endif()
  endif()
endif()
set(PROJECT_VERSION "${VERSION}")
configure_file(${IN} ${OUT} @ONLY)
