# find_package(ASC) on sfumato: the ASC language the vendor's examples use, so that
#   find_package(ASC REQUIRED)
#   project(demo LANGUAGES ASC CXX)
#   add_executable(demo add_custom.asc)
# builds the program against sfumato unchanged: .asc sources are compiled by sfumato-asc (their
# <<<...>>> launches become launches on the simulated chip), --npu-arch=dav-NNNN sets __NPU_ARCH__,
# CMAKE_ASC_RUN_MODE=cpu defines the CPU-debug macros. Every target links sfumato::ascendc, and
# the libraries the vendor's examples and catlass name (tiling_api, register, platform, runtime, ...) exist as empty
# targets: sfumato provides what they would.
get_filename_component(_asc_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
find_package(sfumato REQUIRED CONFIG PATHS "${_asc_prefix}/lib/cmake/sfumato" NO_DEFAULT_PATH)
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")
set(CMAKE_ASC_COMPILER "${_asc_prefix}/bin/sfumato-asc" CACHE FILEPATH "the ASC compiler (sfumato)")
foreach(_asc_lib tiling_api register platform ascendalog graph_base c_sec ascendcl opapi nnopbase ascendc_runtime
        profapi unified_dlog mmpa error_manager runtime ascend_dump ascend_hal)
  if(NOT TARGET ${_asc_lib})
    add_library(${_asc_lib} INTERFACE IMPORTED)
  endif()
endforeach()
link_libraries(sfumato::ascendc)
set(ASC_FOUND TRUE)
