# find_package(sfumato): sfumato's Ascend C layer for programs with their own main() (CPU-debug
# programs with ICPU_RUN_KF, AscendCL programs). Target sfumato::ascendc: libsfumato_ascendc (a
# whole simulator inside) and the include directories of kernel_operator.h, tikicpulib.h and
# acl/acl.h; C++20. CPU-debug sources also need ASCENDC_CPU_DEBUG=1 and __CCE_KT_TEST__=1
# defined (target sfumato::ascendc_cpu_debug adds them).
include("${CMAKE_CURRENT_LIST_DIR}/sfumatoTargets.cmake")
if(NOT TARGET sfumato::ascendc_cpu_debug)
  add_library(sfumato::ascendc_cpu_debug INTERFACE IMPORTED)
  set_target_properties(sfumato::ascendc_cpu_debug PROPERTIES
    INTERFACE_COMPILE_DEFINITIONS "ASCENDC_CPU_DEBUG=1;__CCE_KT_TEST__=1"
    INTERFACE_LINK_LIBRARIES sfumato::ascendc)
endif()
get_filename_component(sfumato_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(sfumato_CONFIG_DIR "${sfumato_PREFIX}/share/sfumato/configs")
set(sfumato_FOUND TRUE)
