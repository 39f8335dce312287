# SPDX-License-Identifier: Apache-2.0
# ffsim_warnings: the warning set every ffsim target links PRIVATE.
add_library(ffsim_warnings INTERFACE)
target_compile_options(ffsim_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wconversion -Wno-sign-conversion -Wdouble-promotion -Wformat=2
    -Wimplicit-fallthrough>)
# g++ 12 gives false -Wrestrict warnings on std::string concatenation at -O3 (GCC bug 105329).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(ffsim_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(FFSIM_WERROR)
  target_compile_options(ffsim_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
