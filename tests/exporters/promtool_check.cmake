# Runs PROGRAM with ARGS (a ;-list), requires it to succeed with non-empty output, and
# passes that output to `PROMTOOL check metrics`, which must accept it without a remark.
#   cmake -DPROGRAM=… "-DARGS=a;b" -DPROMTOOL=… -DWORK=file -P promtool_check.cmake
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} ${ARGS} exited with ${rc}: ${err}")
endif()
if(out STREQUAL "")
  message(FATAL_ERROR "${PROGRAM} ${ARGS} printed nothing")
endif()
file(WRITE "${WORK}" "${out}")
execute_process(COMMAND "${PROMTOOL}" check metrics INPUT_FILE "${WORK}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE pout ERROR_VARIABLE perr)
if(NOT rc EQUAL 0 OR NOT pout STREQUAL "" OR NOT perr STREQUAL "")
  message(FATAL_ERROR "promtool check metrics: exit ${rc}\n${pout}${perr}\n--- input (${WORK}) ---\n${out}")
endif()
