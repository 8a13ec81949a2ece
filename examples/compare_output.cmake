# cmake -DPROGRAM=… -DEXPECTED=file -P compare_output.cmake
execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
file(READ "${EXPECTED}" want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "output differs from ${EXPECTED}:\n--- got ---\n${out}\n--- expected ---\n${want}")
endif()
