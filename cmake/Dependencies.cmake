# Third-party dependencies. Imported targets' include directories are SYSTEM, so
# -Werror applies to our code only.
find_package(Qt6 6.4 REQUIRED COMPONENTS Core Network WebSockets Gui Widgets Test)
find_package(PkgConfig REQUIRED)
find_package(OpenSSL 3 REQUIRED)

# FreeRDP 3.10.x from bookworm-backports (see docs/architecture.md, "Pinned RDP component").
pkg_check_modules(FREERDP_CLIENT REQUIRED IMPORTED_TARGET freerdp3>=3.10 freerdp-client3>=3.10 winpr3>=3.10)
pkg_check_modules(FREERDP_SERVER REQUIRED IMPORTED_TARGET freerdp-server3>=3.10 freerdp3>=3.10 winpr3>=3.10)
pkg_check_modules(LIBVIRT REQUIRED IMPORTED_TARGET libvirt>=9.0)
pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
pkg_check_modules(LIBPNG REQUIRED IMPORTED_TARGET libpng)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)
# The RDP reader's sandbox (src/sandbox): seccomp-bpf through libseccomp.
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp>=2.5)
