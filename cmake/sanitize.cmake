# SPDX-License-Identifier: Apache-2.0
# FFSIM_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer for every target in the tree.
# FFSIM_SANITIZE_LINK_OPTIONS: what a user of an instrumented static library must link with (the
# sanitizer runtimes); src/hfreduce exports it on the installed target.
set(FFSIM_SANITIZE_LINK_OPTIONS "")
if(FFSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  set(FFSIM_SANITIZE_LINK_OPTIONS -fsanitize=address,undefined)
  add_link_options(${FFSIM_SANITIZE_LINK_OPTIONS})
endif()
