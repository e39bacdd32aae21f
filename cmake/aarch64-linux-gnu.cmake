# Cross build for 64-bit ARM (Raspberry Pi 5 / Pi 4) on a Debian x86-64 host:
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Compilers: Debian's g++-aarch64-linux-gnu. Libraries: the cross C/C++ runtime in
# /usr/aarch64-linux-gnu plus Debian multiarch arm64 packages (libpcre2-dev:arm64,
# libssl-dev:arm64 in /usr/lib/aarch64-linux-gnu; scripts/setup installs them). Header-only
# dependencies (nlohmann-json, Eigen, CLI11) are the host's, which are architecture-independent.
# Programs and tests run through qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR), so ctest and
# gtest_discover_tests work unchanged.
#
# The code targets plain ARMv8-A, tuned for the Pi 5's Cortex-A76, so one binary runs on a Pi 4
# and a Pi 5 (the dot-product kernels are one file of their own, chosen at run time: CMakeLists.txt).
# The emulated CPU is qemu's QEMU_CPU (cortex-a76: Pi 5, neon-dotprod; cortex-a72: Pi 4, neon;
# unset: qemu's "max", which has the dot product).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(CMAKE_C_FLAGS_INIT "-march=armv8-a -mtune=cortex-a76")
set(CMAKE_CXX_FLAGS_INIT "-march=armv8-a -mtune=cortex-a76")

# Search the cross sysroot and the multiarch tree; never run host programs found there.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config must read the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# qemu: -L points the dynamic loader at the cross sysroot; LD_LIBRARY_PATH (set for the emulated
# program only, -E) makes it take libc and libstdc++ from there too and find the multiarch
# libraries (libpcre2-8, libcrypto) after them. Without it, once libc6:arm64 is installed (a
# dependency of the multiarch -dev packages) the loader finds that libc through the host's
# /etc/ld.so.cache: a loader and libc from two different glibc builds, and pthread_create hangs.
set(R1PI_AARCH64_LIBRARY_PATH /usr/aarch64-linux-gnu/lib:/usr/lib/aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-aarch64;-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=${R1PI_AARCH64_LIBRARY_PATH})
