# Cross build for IBM Z (s390x, big-endian) with Debian's gcc-s390x-linux-gnu; the binaries run
# under qemu-user (docs/fuzzing.md, "Big-endian: s390x under qemu"). Used by the s390x preset.
#
# Where the s390x libraries come from: the cross C library lives in /usr/s390x-linux-gnu
# (libc6-dev-s390x-cross); Check, zlib, liblzma, libbz2 and OpenSSL are Debian's s390x packages
# unpacked into a sysroot by `tools/setup-debian.sh --cross s390x` (default
# /opt/stguard/s390x-sysroot, or $STG_S390X_SYSROOT at setup and first configure). The build
# needs that sysroot (docs/fuzzing.md says why a multiarch install does not work).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_LIBRARY_ARCHITECTURE s390x-linux-gnu)

set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)

if(DEFINED ENV{STG_S390X_SYSROOT})
  set(STG_S390X_SYSROOT "$ENV{STG_S390X_SYSROOT}" CACHE PATH "s390x packages unpacked here")
else()
  set(STG_S390X_SYSROOT "/opt/stguard/s390x-sysroot" CACHE PATH "s390x packages unpacked here")
endif()
# try_compile runs in a fresh project that gets only this file: hand the choice on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES STG_S390X_SYSROOT)

# find_* search the cross C library and the sysroot, never the host's /usr for libraries.
set(CMAKE_FIND_ROOT_PATH /usr/s390x-linux-gnu ${STG_S390X_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Headers and link paths of the unpacked packages (OpenSSL's configuration header sits in the
# multiarch include folder); -rpath-link lets ld follow libcheck's dependency on libsubunit.
set(stg_s390x_libdirs ${STG_S390X_SYSROOT}/usr/lib/s390x-linux-gnu ${STG_S390X_SYSROOT}/lib/s390x-linux-gnu)
if(EXISTS ${STG_S390X_SYSROOT}/usr/include)
  set(CMAKE_C_FLAGS_INIT
    "-isystem ${STG_S390X_SYSROOT}/usr/include/s390x-linux-gnu -isystem ${STG_S390X_SYSROOT}/usr/include")
  foreach(dir ${stg_s390x_libdirs})
    string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -L${dir} -Wl,-rpath-link,${dir}")
    string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -L${dir} -Wl,-rpath-link,${dir}")
  endforeach()
endif()

# pkg-config (Check) reads the sysroot's .pc files only, and prefixes their paths with it.
set(ENV{PKG_CONFIG_LIBDIR} "${STG_S390X_SYSROOT}/usr/lib/s390x-linux-gnu/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${STG_S390X_SYSROOT}")
set(ENV{PKG_CONFIG_PATH} "")

# ctest runs each cross-built test through qemu-user: -L gives the s390x dynamic loader and C
# library; LD_LIBRARY_PATH (set for the emulated program only) finds the sysroot's shared
# libraries, including those loaded at run time (libcrypto, libz, liblzma, libbz2: parser/dl.c).
string(REPLACE ";" ":" stg_s390x_ld_path "${stg_s390x_libdirs}")
# A cache entry, so that tools/compare-cross.sh finds the same command in CMakeCache.txt.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x -L /usr/s390x-linux-gnu -E LD_LIBRARY_PATH=${stg_s390x_ld_path}
  CACHE STRING "runs the s390x programs (ctest, tools/compare-cross.sh)" FORCE)
