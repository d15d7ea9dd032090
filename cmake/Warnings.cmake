# Our own targets get strict warnings; third-party headers are included as SYSTEM.
function(sfumato_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(SFUMATO_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# One library per top-level folder; sources found by glob so that parallel work rarely
# touches the same CMake file.
# Extra arguments are regexes of sources to leave out (a subfolder that is its own library).
function(sfumato_library name dir)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${dir}/*.cpp)
  foreach(ex ${ARGN})
    list(FILTER srcs EXCLUDE REGEX "${ex}")
  endforeach()
  if(NOT srcs)
    set(srcs ${PROJECT_SOURCE_DIR}/cmake/empty.cpp)
  endif()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  sfumato_warnings(${name})
  sfumato_unity(${name})
endfunction()

# SFUMATO_UNITY (CMakeLists.txt): the target's sources eight to a translation unit. Sources with
# their own compile definitions are compiled alone (CMake leaves them out of the batches).
function(sfumato_unity target)
  if(SFUMATO_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()

# Libraries whose objects register themselves (operators, policies, subcommands) are linked
# whole, so the linker keeps registrations nothing references by name.
set(SFUMATO_LINK_LIBS
    sfumato_serve
    sfumato_llm
    sfumato_system
    "$<LINK_LIBRARY:WHOLE_ARCHIVE,sfumato_graph>"
    "$<LINK_LIBRARY:WHOLE_ARCHIVE,sfumato_runtime>"
    "$<LINK_LIBRARY:WHOLE_ARCHIVE,sfumato_models>"
    "$<LINK_LIBRARY:WHOLE_ARCHIVE,sfumato_traces>"
    sfumato_report sfumato_sweep sfumato_sim sfumato_isa)
