# `cmake --install build --prefix P`: the sfumato command, the Ascend C layer (library, headers,
# build scripts) and its CMake packages (find_package(sfumato) -> sfumato::ascendc;
# find_package(ASC) -> the ASC language), the chip presets, the man page and the docs.
# cmake/Package.cmake makes a Debian package of the same files (cpack -G DEB).
install(TARGETS sfumato RUNTIME DESTINATION bin)
set_target_properties(sfumato_ascendc PROPERTIES EXPORT_NAME ascendc INSTALL_RPATH "")
install(TARGETS sfumato_ascendc EXPORT sfumatoTargets LIBRARY DESTINATION lib)
install(EXPORT sfumatoTargets NAMESPACE sfumato:: DESTINATION lib/cmake/sfumato)
install(FILES cmake/package/sfumatoConfig.cmake DESTINATION lib/cmake/sfumato)
install(FILES cmake/package/ASCConfig.cmake cmake/package/CMakeDetermineASCCompiler.cmake
              cmake/package/CMakeASCCompiler.cmake.in cmake/package/CMakeASCInformation.cmake
              cmake/package/CMakeTestASCCompiler.cmake
        DESTINATION lib/cmake/ASC)
install(PROGRAMS scripts/sfumato-asc scripts/ascendc-build DESTINATION bin)
install(DIRECTORY runtime/ascendc/include/ DESTINATION include/sfumato/ascendc)
# What the Ascend C headers include of sfumato's own.
install(DIRECTORY isa/ DESTINATION include/sfumato/isa FILES_MATCHING PATTERN "*.h")
install(DIRECTORY runtime/kernel/ DESTINATION include/sfumato/runtime/kernel FILES_MATCHING PATTERN "*.h")
install(FILES sim/error.h DESTINATION include/sfumato/sim)
# The environment a user sources, as the vendor's set_env.sh (programs, library path, ASCEND_HOME_PATH).
install(FILES cmake/package/set_env.sh DESTINATION share/sfumato)
install(DIRECTORY configs/ DESTINATION share/sfumato/configs FILES_MATCHING PATTERN "*.ini" PATTERN "*.json")
# The man page, made from `sfumato --help-all` (cmake/man_page.cmake) whenever the program changes.
# The sanitizer build's program runs here without the suite's leak suppressions.
set(sfumato_man ${CMAKE_BINARY_DIR}/man/sfumato.1)
add_custom_command(OUTPUT ${sfumato_man} ${sfumato_man}.gz
  COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
          ${CMAKE_COMMAND} -DSFUMATO=$<TARGET_FILE:sfumato> -DOUT=${sfumato_man} -DVERSION=${PROJECT_VERSION}
          -P ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
  DEPENDS sfumato ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
  COMMENT "Writing man/sfumato.1 from sfumato --help-all" VERBATIM)
add_custom_target(sfumato_man ALL DEPENDS ${sfumato_man}.gz)
install(FILES ${sfumato_man}.gz DESTINATION share/man/man1)
# The front page and the user guide (walk-throughs, reference, design notes).
install(FILES README.md DESTINATION share/doc/sfumato)
install(DIRECTORY docs/ DESTINATION share/doc/sfumato)
