# Cross-compiling the probe for 64-bit RISC-V (riscv64) with nothing but a compiler prefix
# (Debian: apt-get install gcc-riscv64-linux-gnu qemu-user-static).
#
#   cmake -S . -B build-riscv64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/riscv64-linux-gnu.cmake -DOSM_WERROR=ON
#   cmake --build build-riscv64 -j2 && (cd build-riscv64 && ctest --output-on-failure)
#
# CTest runs the cross-built tests through CMAKE_CROSSCOMPILING_EMULATOR
# (qemu-user). The probe links statically by default (OSM_STATIC), and static
# binaries need no target sysroot; "-L /usr/riscv64-linux-gnu" lets dynamically linked
# builds (OSM_STATIC=OFF) find the target's loader and libc as well.
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(OSM_CROSS_PREFIX riscv64-linux-gnu)
set(OSM_QEMU_NAME qemu-riscv64-static)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-common.cmake)
