# The stripped size of the minimal CPU-only program (benchmarks/minimal.cpp), guarded so
# that growth shows up as a failed test instead of in the next measurement. Issue 8's
# target is under 100,000 bytes; the budget is what the code takes now, on the compiler
# the budget was measured with (GCC 12 on Debian 12, as CI has), and comes down as code
# is taken out. Sizes depend on the compiler and its version: with another, the test is
# not added.
#
# 2026-11-25: 109,344 bytes (the target is not met: four changes of 2026-11-24 took the
# program from 97,056 to 113,440 bytes; see BENCHMARKS.md).
# 2026-11-25 (thirty-sixth session): 105,312 bytes.
# 2026-11-25 (thirty-seventh session): 96,976 bytes, under the target. The file grows by
# whole pages: at this budget the code has about 500 bytes of room before its next page,
# the read-only data and unwind tables about 800 (BENCHMARKS.md, 'Binary size').
# 2026-11-25 (forty-third session): 96,976 bytes still; the code's room is down to 11 bytes
# (.fini ends at 69,621 of 69,632) after the storage fixes.
# 2026-11-25 (forty-fourth session): 96,976 bytes still; .fini ends at 69,569 (63 bytes of
# room) after the registry's per-node memory totals became one array.
# 2026-11-25 (forty-second session): 96,976 bytes still, but the code's room was down to
# 63 bytes (.fini ended at 69,569 of 69,632): the review fixes to the host probes took about 410 bytes of code (a
# Google bare-metal check, cgroup and storage checks, out-of-range kinds); a first version
# crossed into the next page (101,072 bytes) and was made smaller until it did not.

set(_ai_hwaccel_size_budget 96976)
set(_ai_hwaccel_size_target 100000)
# The CLI, compiled as CMake's Release build compiles it (binary_size.sh -C; about two
# minutes of one core). Issue 8's target is under 850,000 bytes. 2026-11-25 (forty-second
# session): 849,440 bytes. It had grown past the target unguarded (853,536 at cd6824b, then
# 865,824 with that session's fixes); the tables' name lists became pointers to their
# literals (name_list: 104 bytes a catalogue row less), which took it back under. The last
# review fixes of that session (tree writing, the JSON indent's bound) took 32 bytes more:
# 849,472, 528 bytes under the target.
# 2026-11-25 (forty-third session): the review fixes took it to 853,568 (a page more: the
# code and the relocated read-only data together crossed a page boundary); device_spec's
# `source` as a pointer (8 bytes a row less: 1,728 bytes of relocated data) and trimmed fixes
# took it back: 849,504, with 24 bytes to spare before the next page.
# 2026-11-25 (forty-fourth session): 849,568 (64 bytes more writable data; the code has
# 1,048 bytes of room before its next page after `arch` and `name_list` made room).
set(_ai_hwaccel_cli_size_budget 849568)
set(_ai_hwaccel_cli_size_target 850000)
find_program(AI_HWACCEL_STRIP NAMES strip)
find_program(AI_HWACCEL_BASH NAMES bash)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13 AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64"
   AND AI_HWACCEL_STRIP AND AI_HWACCEL_BASH)
  add_test(NAME binary_size_minimal
           COMMAND "${CMAKE_COMMAND}" "-DBASH=${AI_HWACCEL_BASH}" "-DCXX=${CMAKE_CXX_COMPILER}"
                   "-DSTRIP=${AI_HWACCEL_STRIP}" "-DROOT=${PROJECT_SOURCE_DIR}"
                   "-DBUDGET=${_ai_hwaccel_size_budget}" "-DTARGET=${_ai_hwaccel_size_target}"
                   -P "${CMAKE_CURRENT_SOURCE_DIR}/size/check_size.cmake")
  if(AI_HWACCEL_JSON_FOUND)
    add_test(NAME binary_size_cli
             COMMAND "${CMAKE_COMMAND}" "-DBASH=${AI_HWACCEL_BASH}" "-DCXX=${CMAKE_CXX_COMPILER}"
                     "-DSTRIP=${AI_HWACCEL_STRIP}" "-DROOT=${PROJECT_SOURCE_DIR}" -DWHAT=cli
                     "-DBUDGET=${_ai_hwaccel_cli_size_budget}" "-DTARGET=${_ai_hwaccel_cli_size_target}"
                     -P "${CMAKE_CURRENT_SOURCE_DIR}/size/check_size.cmake")
    set_tests_properties(binary_size_cli PROPERTIES TIMEOUT 600)
  endif()
else()
  message(STATUS "ai_hwaccel: the minimal program's size budget is for GCC 12 on x86-64; its test is skipped")
endif()
