# Cross-compiling the probe for x86-64 from another architecture (an Arm
# workstation driving `osmeter fleet run` to x86-64 servers, say)
# (Debian: apt-get install gcc-x86-64-linux-gnu qemu-user-static).
#
#   cmake -S . -B build-x86_64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/x86_64-linux-gnu.cmake -DOSM_WERROR=ON
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(OSM_CROSS_PREFIX x86_64-linux-gnu)
set(OSM_QEMU_NAME qemu-x86_64-static)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-common.cmake)
