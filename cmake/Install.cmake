# What `cmake --install` puts under the prefix (GNUInstallDirs): the operator's two programs,
# guest-console and guest-console-viewer (their install() lines sit next to the targets in
# src/app and widgets), the documentation, and the machine-scoped configuration directory.
# Nothing from tests/ and none of tools/: gc-issue-grant, gc-demo-vm and guest-console-demo
# are test and demo tools (the run orchestrator issues grants; the demo needs the test guest).
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# The docs keep the repository's layout so README's relative links still resolve.
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/packaging/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB gc_docs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${gc_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
# The results the runners generated (docs/results), which the reference pages link.
file(GLOB gc_results CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/results/*.md)
install(FILES ${gc_results} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs/results)

# Manual pages, compressed as Debian installs them (gzip -n: no time stamp in the file).
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/packaging)
foreach(page guest-console.1 guest-console-viewer.1)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/packaging/man/${page})
  execute_process(COMMAND gzip -9 -n -c ${CMAKE_SOURCE_DIR}/packaging/man/${page}
                  OUTPUT_FILE ${CMAKE_BINARY_DIR}/packaging/${page}.gz COMMAND_ERROR_IS_FATAL ANY)
  install(FILES ${CMAKE_BINARY_DIR}/packaging/${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endforeach()

# Machine-scoped configuration: the operator puts the grant issuer's public key here as
# grant-issuer.pem. Shipped empty (root:root 0755): the package never carries a key.
# With the prefix /usr this is /etc/guest-console (GNUInstallDirs' special case), an absolute
# path that `cmake --install --prefix` does not move: stage an install with DESTDIR instead.
set(GC_CONFIG_DIR ${CMAKE_INSTALL_FULL_SYSCONFDIR}/guest-console)
install(DIRECTORY DESTINATION ${GC_CONFIG_DIR})
