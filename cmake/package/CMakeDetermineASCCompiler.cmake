# The ASC language's compiler: sfumato-asc, set by find_package(ASC).
if(NOT CMAKE_ASC_COMPILER)
  message(FATAL_ERROR "the ASC language needs find_package(ASC) before project(... LANGUAGES ASC)")
endif()
set(CMAKE_ASC_COMPILER_ENV_VAR "ASC")
configure_file(${CMAKE_CURRENT_LIST_DIR}/CMakeASCCompiler.cmake.in
               ${CMAKE_PLATFORM_INFO_DIR}/CMakeASCCompiler.cmake @ONLY)
