# SPDX-License-Identifier: Apache-2.0
# FFSIM_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer for every target in the tree.
if(FFSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
