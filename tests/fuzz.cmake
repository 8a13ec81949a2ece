# Fuzz targets (fuzz/), built with clang's libFuzzer and run briefly as tests.
#
# The main build may use any compiler; libFuzzer needs clang, so the targets are compiled
# here by invoking clang++ directly (as the Windows cross-compile test invokes MinGW).
# They are built by the first test (`fuzz_build`), not by `all`: seven sanitized
# translation units take minutes of CPU that a plain build should not pay. Each target
# then gets a bounded run (AI_HWACCEL_FUZZ_SECONDS, 10 s by default; the whole set stays
# well under three minutes on two cores) that first replays fuzz/regressions/<target>/*.
# fuzz/run_long.sh does the long runs.

set(AI_HWACCEL_FUZZ_SECONDS 10 CACHE STRING "Seconds of fuzzing per target in the test suite")
find_program(AI_HWACCEL_FUZZ_CXX NAMES clang++-14 clang++)

set(_fuzz_ok FALSE)
if(AI_HWACCEL_FUZZ_CXX)
  # Does this clang link a libFuzzer program with the sanitizers? (Debian splits the
  # runtime into libclang-rt-dev / libclang-common-dev; a bare clang cannot.)
  set(_probe_dir "${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe")
  file(MAKE_DIRECTORY "${_probe_dir}")
  file(WRITE "${_probe_dir}/probe.cpp"
       "#include <cstddef>\n#include <cstdint>\n"
       "extern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
  execute_process(COMMAND "${AI_HWACCEL_FUZZ_CXX}" -std=c++20 -fsanitize=fuzzer,address,undefined
                          "${_probe_dir}/probe.cpp" -o "${_probe_dir}/probe"
                  RESULT_VARIABLE _probe_rc OUTPUT_QUIET ERROR_QUIET)
  if(_probe_rc EQUAL 0)
    set(_fuzz_ok TRUE)
  endif()
endif()

if(NOT _fuzz_ok)
  message(STATUS "ai_hwaccel: no clang++ with -fsanitize=fuzzer; the fuzz tests are skipped")
elseif(NOT Python3_EXECUTABLE)
  message(STATUS "ai_hwaccel: no Python 3 to write the seed corpora; the fuzz tests are skipped")
else()
  set(_fuzz_src "${PROJECT_SOURCE_DIR}/fuzz")
  set(_fuzz_bin "${CMAKE_CURRENT_BINARY_DIR}/fuzz")
  set(AI_HWACCEL_FUZZ_TARGETS capture parsers machine model_file registry_json disk_cache cli)

  # The library's own switches, as the targets of the main build see them.
  set(_fuzz_defs "$<TARGET_PROPERTY:ai_hwaccel,INTERFACE_COMPILE_DEFINITIONS>")
  set(_fuzz_flags -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
                  -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror
                  "-I${PROJECT_SOURCE_DIR}/include" "$<$<BOOL:${_fuzz_defs}>:-D$<JOIN:${_fuzz_defs},$<SEMICOLON>-D>>")
  foreach(_dep range-v3::range-v3 nlohmann_json::nlohmann_json)
    if(TARGET ${_dep})
      list(APPEND _fuzz_flags
           "$<$<BOOL:$<TARGET_PROPERTY:${_dep},INTERFACE_INCLUDE_DIRECTORIES>>:-I$<JOIN:$<TARGET_PROPERTY:${_dep},INTERFACE_INCLUDE_DIRECTORIES>,$<SEMICOLON>-I>>")
    endif()
  endforeach()

  file(GLOB_RECURSE _lib_headers CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/*.hpp")
  set(_fuzz_binaries "")
  foreach(_t IN LISTS AI_HWACCEL_FUZZ_TARGETS)
    set(_deps "${_fuzz_src}/fuzz_${_t}.cpp" "${_fuzz_src}/fuzz_common.hpp" ${_lib_headers})
    if(_t STREQUAL "cli")
      file(GLOB _cli_sources "${PROJECT_SOURCE_DIR}/tools/cli/*")
      list(APPEND _deps ${_cli_sources})
    endif()
    add_custom_command(OUTPUT "${_fuzz_bin}/fuzz_${_t}"
                       COMMAND "${AI_HWACCEL_FUZZ_CXX}" ${_fuzz_flags} "${_fuzz_src}/fuzz_${_t}.cpp"
                               -o "${_fuzz_bin}/fuzz_${_t}" -pthread -ldl
                       DEPENDS ${_deps}
                       COMMENT "Building fuzz target fuzz_${_t} with ${AI_HWACCEL_FUZZ_CXX}"
                       COMMAND_EXPAND_LISTS VERBATIM)
    list(APPEND _fuzz_binaries "${_fuzz_bin}/fuzz_${_t}")
  endforeach()

  # Seed corpora, written from the fixtures each time the targets are built (a second's
  # work; the fixtures stay untouched). Always rewritten rather than tracked file by file:
  # sysfs captures have ':' in their names, which make cannot take as dependencies.
  add_custom_target(ai_hwaccel_fuzz_corpus
                    COMMAND "${CMAKE_COMMAND}" -E rm -rf "${_fuzz_bin}/corpus"
                    COMMAND "${Python3_EXECUTABLE}" "${_fuzz_src}/make_corpus.py"
                            --fixtures "${AI_HWACCEL_FIXTURES_DIR}"
                            --machines "${CMAKE_CURRENT_SOURCE_DIR}/machines" --out "${_fuzz_bin}/corpus"
                    COMMENT "Writing the fuzz seed corpora" VERBATIM)
  add_custom_target(ai_hwaccel_fuzzers DEPENDS ${_fuzz_binaries})
  add_dependencies(ai_hwaccel_fuzzers ai_hwaccel_fuzz_corpus)

  add_test(NAME fuzz_build COMMAND "${CMAKE_COMMAND}" --build "${PROJECT_BINARY_DIR}" --target ai_hwaccel_fuzzers)
  set_tests_properties(fuzz_build PROPERTIES FIXTURES_SETUP ai_hwaccel_fuzzers TIMEOUT 1800)
  foreach(_t IN LISTS AI_HWACCEL_FUZZ_TARGETS)
    set(_extra "")
    if(_t STREQUAL "cli")
      set(_extra "-close_fd_mask=2") # the tool's messages; libFuzzer's own still show
    endif()
    add_test(NAME fuzz_${_t}
             COMMAND "${CMAKE_COMMAND}" "-DFUZZER=${_fuzz_bin}/fuzz_${_t}" "-DCORPUS=${_fuzz_bin}/corpus/${_t}"
                     "-DWORK=${_fuzz_bin}/work/${_t}" "-DREGRESSIONS=${_fuzz_src}/regressions/${_t}"
                     "-DSECONDS=${AI_HWACCEL_FUZZ_SECONDS}" "-DEXTRA=${_extra}" -P "${_fuzz_src}/run_target.cmake")
    set_tests_properties(fuzz_${_t} PROPERTIES FIXTURES_REQUIRED ai_hwaccel_fuzzers LABELS fuzz
                         TIMEOUT 300 RUN_SERIAL TRUE)
  endforeach()
endif()
