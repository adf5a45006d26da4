/* build_info.h - how this probe was built. CMake defines the macros
 * (probe/CMakeLists.txt); these fallbacks serve other builds. OSM_BUILD_STATIC
 * has none: where it is not defined, the machine description says null. */
#ifndef OSM_BUILD_INFO_H
#define OSM_BUILD_INFO_H

#ifndef OSM_VERSION
#define OSM_VERSION "unknown"
#endif
#ifndef OSM_BUILD_COMPILER
#define OSM_BUILD_COMPILER "unknown"
#endif
#ifndef OSM_BUILD_FLAGS
#define OSM_BUILD_FLAGS "unknown"
#endif
#ifndef OSM_BUILD_TYPE
#define OSM_BUILD_TYPE "unknown"
#endif
#ifndef OSM_BUILD_ARCH
#define OSM_BUILD_ARCH "unknown"
#endif

#endif
