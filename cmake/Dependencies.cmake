# Every dependency comes from a Debian package (see scripts/deps).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc)
add_library(sfumato_systemc INTERFACE)
target_link_libraries(sfumato_systemc INTERFACE PkgConfig::SYSTEMC)
# Debian's SystemC is built for C++17; its ABI check symbol must match.
target_compile_definitions(sfumato_systemc INTERFACE SC_CPLUSPLUS=201703L SC_INCLUDE_DYNAMIC_PROCESSES)

find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(HDF5 REQUIRED COMPONENTS CXX)
add_library(sfumato_hdf5 INTERFACE)
target_include_directories(sfumato_hdf5 SYSTEM INTERFACE ${HDF5_INCLUDE_DIRS})
target_link_libraries(sfumato_hdf5 INTERFACE ${HDF5_CXX_LIBRARIES} ${HDF5_LIBRARIES})
target_compile_definitions(sfumato_hdf5 INTERFACE ${HDF5_DEFINITIONS})
find_package(nlohmann_json 3 REQUIRED)
find_package(Threads REQUIRED)
# ONNX's CMake package refers to protobuf::libprotobuf, so Protobuf comes first.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
