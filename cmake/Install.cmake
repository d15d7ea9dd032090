# `cmake --install build --prefix P`: the sfumato command, the Ascend C layer (library, headers,
# build scripts) and its CMake packages (find_package(sfumato) -> sfumato::ascendc;
# find_package(ASC) -> the ASC language), and the chip presets.
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
install(DIRECTORY configs/ DESTINATION share/sfumato/configs FILES_MATCHING PATTERN "*.ini")
