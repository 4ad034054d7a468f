# ASan + UBSan for the test build (scripts/test builds with GC_SANITIZE=ON).
if(GC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
