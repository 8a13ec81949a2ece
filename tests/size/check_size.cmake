# Builds the minimal program as benchmarks/binary_size.sh builds its headline row (-Os, no
# backends, no JSON; `binary_size.sh -m` prints its stripped size), or with -DWHAT=cli the
# CLI as CMake's Release build makes it (`binary_size.sh -C`), and fails when it is larger
# than BUDGET bytes.
#   cmake -DBASH=… -DCXX=… -DSTRIP=… -DROOT=<source dir> -DBUDGET=<bytes> -DTARGET=<bytes>
#         [-DWHAT=cli] -P check_size.cmake
set(_flag -m)
set(_what "the minimal program")
if(WHAT STREQUAL "cli")
  set(_flag -C)
  set(_what "the CLI (CMake's Release options)")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "CXX=${CXX}" "STRIP=${STRIP}"
                        "${BASH}" "${ROOT}/benchmarks/binary_size.sh" ${_flag}
                RESULT_VARIABLE rc OUTPUT_VARIABLE size ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT size MATCHES "^[0-9]+$")
  message(FATAL_ERROR "benchmarks/binary_size.sh ${_flag} failed (${rc}): ${size}\n${err}")
endif()
if(size GREATER BUDGET)
  message(FATAL_ERROR "${_what} is ${size} bytes stripped, over its budget of ${BUDGET} "
                      "(issue 8's target: under ${TARGET}). Make room (BENCHMARKS.md, 'Binary size', says "
                      "what did before), or raise the budget in tests/size/size.cmake and say why there.")
endif()
message(STATUS "${_what}: ${size} bytes stripped (budget ${BUDGET}, target under ${TARGET})")
