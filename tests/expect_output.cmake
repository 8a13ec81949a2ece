# Runs PROGRAM with ARGS (a ;-list) and compares its standard output with the file
# EXPECTED, byte for byte. cmake -DPROGRAM=… "-DARGS=a;b" -DEXPECTED=file -P expect_output.cmake
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} ${ARGS} exited with ${rc}: ${err}")
endif()
file(READ "${EXPECTED}" want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "output differs from ${EXPECTED}:\n--- got ---\n${out}\n--- expected ---\n${want}")
endif()
