# `cpack -G DEB` in the build tree: a Debian package of what cmake/Install.cmake installs, under
# /usr. Its Depends line comes from the libraries the program and libsfumato_ascendc actually
# link (dpkg-shlibdeps on the staged files: libsystemc, libboost-program-options, libhdf5-cpp,
# libprotobuf, libonnx, ...); tests/package/package_test.sh builds, installs and tours it.
set(CPACK_PACKAGE_NAME sfumato)
set(CPACK_PACKAGE_VENDOR "sfumato")
set(CPACK_PACKAGE_CONTACT "sfumato maintainers <sfumato@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "cycle-level simulator of an Ascend-like NPU")
set(CPACK_PACKAGE_DESCRIPTION
    "sfumato runs operator kernels, ONNX models, workload traces and training steps on a\n"
    "cycle-level SystemC model of a DaVinci-style (Ascend-like) NPU and reports cycles,\n"
    "bandwidths, timelines and statistics. The package holds the sfumato command, its man\n"
    "page, the chip and system presets, the Ascend C layer (libsfumato_ascendc, headers,\n"
    "build scripts, CMake packages) and the documentation.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The build and the sfumato-asc / ascendc-build scripts of an Ascend C program need a compiler
# and CMake; the simulator alone does not.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "g++, cmake")
# The line tables of the default build are most of the program's size; a package ships it stripped.
set(CPACK_STRIP_FILES ON)
include(CPack)
