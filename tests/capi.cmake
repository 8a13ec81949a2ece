# The C ABI (capi/): a C program built as C99 against libai_hwaccel_c, the header compiled
# as C++ too, and the library's exported symbols checked to be the C ABI only.
# Included by tests/CMakeLists.txt; skipped when the library is not built or no C
# compiler is available.
if(NOT TARGET ai_hwaccel_c)
  message(STATUS "ai_hwaccel: C ABI not built (AI_HWACCEL_BUILD_CAPI off); its tests are skipped")
  return()
endif()
include(CheckLanguage)
check_language(C)
if(NOT CMAKE_C_COMPILER)
  message(STATUS "ai_hwaccel: no C compiler; the C ABI tests are skipped")
  return()
endif()
enable_language(C)

add_executable(capi_test capi/test.c)
target_link_libraries(capi_test PRIVATE ai_hwaccel::ai_hwaccel_c)
# Linked by the C++ driver: under tools/test-all.sh's sanitizers the library needs the C++
# parts of the sanitizer runtimes, which the C driver leaves out. The program stays C99.
set_target_properties(capi_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
                                           LINKER_LANGUAGE CXX)
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(capi_test PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror)
endif()
add_test(NAME capi_test
         COMMAND capi_test "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-macbook-pro-m1pro/expected.json"
                           "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-workstation-rtx4090/expected.json"
                           "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-ib-cluster-node-8gpu/expected.json"
                           "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-hgx-h100-8gpu-nvswitch/expected.json"
                           "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-inf2-host/expected.json"
                           "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-max1550-2card-xe/expected.json")
set_tests_properties(capi_test PROPERTIES PASS_REGULAR_EXPRESSION "all checks passed")

# The header is valid C++ as well (extern "C", no C-only constructs).
add_library(capi_header_cxx OBJECT capi/header.cpp)
target_link_libraries(capi_header_cxx PRIVATE ai_hwaccel::ai_hwaccel_c)
target_compile_options(capi_header_cxx PRIVATE ${AI_HWACCEL_WARNINGS})
add_test(NAME capi_header_compiles_as_cxx
         COMMAND "${CMAKE_COMMAND}" --build "${PROJECT_BINARY_DIR}" --target capi_header_cxx)

# Only ahw_* symbols leave the shared library (ELF platforms, where nm -D reads them).
if(CMAKE_NM AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME capi_exports_only_ahw_symbols
           COMMAND "${CMAKE_COMMAND}" -DNM=${CMAKE_NM} -DLIBRARY=$<TARGET_FILE:ai_hwaccel_c>
                   -P "${CMAKE_CURRENT_SOURCE_DIR}/capi/check_exports.cmake")
endif()
