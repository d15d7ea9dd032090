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

# Optional: MPI (Debian's openmpi: libopenmpi-dev, openmpi-bin) runs a system's chips split over
# processes (sim/mpi, `mpirun -np N sfumato collective ...`). Without it everything else builds
# and the MPI tests are skipped, saying why.
option(SFUMATO_MPI "Use MPI when it is found (split multi-chip runs over processes)" ON)
set(SFUMATO_HAVE_MPI OFF)
# The sanitizer build leaves MPI out: LeakSanitizer reports Open MPI's own allocations.
if(SFUMATO_MPI AND NOT SFUMATO_SANITIZE AND NOT SFUMATO_FUZZ)
  set(MPI_CXX_SKIP_MPICXX ON)  # the C API only, not the removed C++ bindings
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(SFUMATO_HAVE_MPI ON)
    message(STATUS "MPI found (${MPI_CXX_LIBRARIES}): split multi-chip runs enabled")
  else()
    message(STATUS "MPI not found: multi-chip runs stay in one process (install libopenmpi-dev to split them)")
  endif()
endif()
