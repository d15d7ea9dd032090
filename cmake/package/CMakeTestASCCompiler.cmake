# sfumato-asc is a script around the host C++ compiler, which CMake tests as CXX.
set(CMAKE_ASC_COMPILER_WORKS 1 CACHE INTERNAL "")
