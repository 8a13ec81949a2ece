# Builds benchmarks/minimal.cpp as benchmarks/binary_size.sh builds its headline row (-Os,
# no backends, no JSON), strips it and fails when it is larger than BUDGET bytes.
#   cmake -DCXX=… -DSTRIP=… -DROOT=<source dir> -DOUT=<file> -DBUDGET=<bytes> -DTARGET=<bytes>
#         -P check_size.cmake
execute_process(COMMAND "${CXX}" -std=c++20 -Os -DNDEBUG -DAI_HWACCEL_BACKENDS_NONE=1 -DAI_HWACCEL_JSON=0
                        "-I${ROOT}/include" "${ROOT}/benchmarks/minimal.cpp" -o "${OUT}" -pthread
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the minimal program did not build:\n${err}")
endif()
execute_process(COMMAND "${STRIP}" --strip-all "${OUT}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "strip failed: ${err}")
endif()
file(SIZE "${OUT}" size)
if(size GREATER BUDGET)
  message(FATAL_ERROR "the minimal program is ${size} bytes stripped, over its budget of ${BUDGET} "
                      "(issue 8's target: under ${TARGET}). Make room (BENCHMARKS.md, 'Binary size', says "
                      "what did before), or raise the budget in tests/size/size.cmake and say why there.")
endif()
message(STATUS "the minimal program: ${size} bytes stripped (budget ${BUDGET}, target under ${TARGET})")
