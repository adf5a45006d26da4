# Cross-compiling the probe for 64-bit Arm (aarch64) with nothing but a compiler prefix
# (Debian: apt-get install gcc-aarch64-linux-gnu qemu-user-static).
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake -DOSM_WERROR=ON
#   cmake --build build-aarch64 -j2 && (cd build-aarch64 && ctest --output-on-failure)
#
# CTest runs the cross-built tests through CMAKE_CROSSCOMPILING_EMULATOR
# (qemu-user). The probe links statically by default (OSM_STATIC), and static
# binaries need no target sysroot; "-L /usr/aarch64-linux-gnu" lets dynamically linked
# builds (OSM_STATIC=OFF) find the target's loader and libc as well.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(OSM_CROSS_PREFIX aarch64-linux-gnu)
set(OSM_QEMU_NAME qemu-aarch64-static)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-common.cmake)
