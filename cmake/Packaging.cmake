# CPack: guest-console_<version>_amd64.deb from the install rules (cmake/Install.cmake).
# scripts/package builds it (Release, -DCMAKE_INSTALL_PREFIX=/usr, GC_BUILD_TESTS=OFF);
# cmake/CPackProjectConfig.cmake refuses to package any other kind of build.
set(GC_PACKAGE_MAINTAINER "Guest Console maintainers <maintainers@guest-console.invalid>"
    CACHE STRING "Maintainer of the .deb (control file and changelog); a release sets the real one")

# Debian's changelog for this version (a binary package must carry one). Its date honours
# SOURCE_DATE_EPOCH, so a package built from a fixed epoch is reproducible.
string(TIMESTAMP GC_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${CMAKE_SOURCE_DIR}/packaging/changelog.in ${CMAKE_BINARY_DIR}/packaging/changelog @ONLY)
execute_process(COMMAND gzip -9 -n -c ${CMAKE_BINARY_DIR}/packaging/changelog
                OUTPUT_FILE ${CMAKE_BINARY_DIR}/packaging/changelog.gz COMMAND_ERROR_IS_FATAL ANY)
install(FILES ${CMAKE_BINARY_DIR}/packaging/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME guest-console)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${GC_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "one locked-down console to the exact VM a grant names")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Runtime dependencies come from the binaries (dpkg-shlibdeps): Qt 6, libvirt, OpenSSL and
# FreeRDP 3 from bookworm-backports (libfreerdp3-3, libfreerdp-client3-3, libwinpr3-3).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The extended description (CPackDeb puts the summary above it and indents it).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Guest Console opens one console to the exact running libvirt VM a fresh
grant names (FreeRDP 3 over a single loopback port forward), for preparing a
Windows guest before a computer-use benchmark run. It locks the console before
the desktop is captured and lets the model run exactly one action through an
authorized MCP tool, with a run-bound receipt.
This package holds the console (guest-console) and the standalone Qt viewer
(guest-console-viewer); the VS Code extension is a separate guest-console.vsix.
The grant issuer's public key goes to /etc/guest-console/grant-issuer.pem.")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/packaging/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Read by cmake/CPackProjectConfig.cmake when cpack runs.
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_SOURCE_DIR}/cmake/CPackProjectConfig.cmake)
set(CPACK_GC_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_GC_BUILD_TYPE "${CMAKE_BUILD_TYPE}")
set(CPACK_GC_SANITIZE "${GC_SANITIZE}")
set(CPACK_GC_TEST_HOOKS "${GC_TEST_HOOKS}")

include(CPack)
