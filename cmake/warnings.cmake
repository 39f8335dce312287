# SPDX-License-Identifier: Apache-2.0
# ffsim_warnings: the warning set every ffsim target links PRIVATE.
add_library(ffsim_warnings INTERFACE)
target_compile_options(ffsim_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wconversion -Wno-sign-conversion -Wdouble-promotion -Wformat=2
    -Wimplicit-fallthrough>)
if(FFSIM_WERROR)
  target_compile_options(ffsim_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
