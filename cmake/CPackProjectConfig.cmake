# Run by cpack before it packages: only an operator build becomes a .deb.
if(NOT CPACK_GC_INSTALL_PREFIX STREQUAL "/usr")
  # The configuration directory is an absolute path computed at configure time
  # (/etc/guest-console only for the prefix /usr).
  message(FATAL_ERROR "package: configure with -DCMAKE_INSTALL_PREFIX=/usr (scripts/package does)")
endif()
if(NOT CPACK_GC_BUILD_TYPE STREQUAL "Release")
  message(FATAL_ERROR "package: configure with -DCMAKE_BUILD_TYPE=Release, not '${CPACK_GC_BUILD_TYPE}'")
endif()
if(CPACK_GC_SANITIZE OR CPACK_GC_TEST_HOOKS)
  message(FATAL_ERROR "package: GC_SANITIZE and GC_TEST_HOOKS must be OFF in a packaged build")
endif()
