# One version for the whole project: the console, the viewer, the .deb and the extension
# (vscode-extension/package.json) carry PROJECT_VERSION. A drift stops the configure, so no
# build and no package can carry two version numbers.
file(READ ${CMAKE_SOURCE_DIR}/vscode-extension/package.json gc_extension_manifest)
string(JSON gc_extension_version ERROR_VARIABLE gc_json_error GET "${gc_extension_manifest}" version)
if(gc_json_error OR NOT gc_extension_version STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "vscode-extension/package.json has version '${gc_extension_version}' but "
                      "CMakeLists.txt project(VERSION) is ${PROJECT_VERSION}: set both to the same release")
endif()
unset(gc_extension_manifest)
