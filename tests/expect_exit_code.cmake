# cmake -DPROGRAM=… -DARGS="a;b" -DEXPECTED=N -P expect_exit_code.cmake
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc STREQUAL "${EXPECTED}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: exit code ${rc}, expected ${EXPECTED}")
endif()
