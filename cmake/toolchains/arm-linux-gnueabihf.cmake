# Cross-compiling the probe for 32-bit Arm (armv7, hard float) with nothing but a compiler prefix
# (Debian: apt-get install gcc-arm-linux-gnueabihf qemu-user-static).
#
#   cmake -S . -B build-armv7l -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-linux-gnueabihf.cmake -DOSM_WERROR=ON
#   cmake --build build-armv7l -j2 && (cd build-armv7l && ctest --output-on-failure)
#
# CTest runs the cross-built tests through CMAKE_CROSSCOMPILING_EMULATOR
# (qemu-user). The probe links statically by default (OSM_STATIC), and static
# binaries need no target sysroot; "-L /usr/arm-linux-gnueabihf" lets dynamically linked
# builds (OSM_STATIC=OFF) find the target's loader and libc as well.
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(OSM_CROSS_PREFIX arm-linux-gnueabihf)
set(OSM_QEMU_NAME qemu-arm-static)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-common.cmake)
