# Warnings are errors in our own code. Link gc_warnings into every target we write.
add_library(gc_warnings INTERFACE)
target_compile_options(gc_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Werror
  -Wshadow -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual
  -Wnull-dereference -Wimplicit-fallthrough -Wformat=2)
target_compile_definitions(gc_warnings INTERFACE
  QT_NO_NARROWING_CONVERSIONS_IN_CONNECT QT_NO_FOREACH)

# gc_target(<name>): the common settings for a target of ours.
function(gc_target name)
  target_include_directories(${name} PUBLIC ${GC_INCLUDE_ROOTS})
  target_link_libraries(${name} PRIVATE gc_warnings)
endfunction()
