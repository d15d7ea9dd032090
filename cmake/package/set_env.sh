# sfumato's Ascend C environment, sourced the way the vendor's toolkit set_env.sh is
# (`source PREFIX/share/sfumato/set_env.sh`, bash): the programs (sfumato, sfumato-asc), the library
# every Ascend C program and kernel library links (libsfumato_ascendc.so, for programs whose
# libraries carry no run path: catlass's shared-library examples), and ASCEND_HOME_PATH /
# CMAKE_PREFIX_PATH, which the vendor's build scripts and find_package(ASC) read.
_sfumato_prefix="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/../.." && pwd -P)"
export ASCEND_HOME_PATH="$_sfumato_prefix"
export ASCEND_TOOLKIT_HOME="$_sfumato_prefix"
export CMAKE_PREFIX_PATH="$_sfumato_prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export LD_LIBRARY_PATH="$_sfumato_prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$_sfumato_prefix/bin:$PATH"
unset _sfumato_prefix
