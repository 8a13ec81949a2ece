# Runs PROGRAM with ARGS (a ;-list) and checks, each only when given: the exit code
# (CODE), a regular expression stdout must match (STDOUT) and one it must not (NOT_STDOUT),
# and one stderr must match (STDERR), or be empty (STDERR_EMPTY=1).
#   cmake -DPROGRAM=… "-DARGS=a;b" -DCODE=2 "-DSTDOUT=regex" "-DSTDERR=regex" -P expect.cmake
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(_failed "")
if(DEFINED CODE AND NOT rc STREQUAL "${CODE}")
  string(APPEND _failed "exit code ${rc}, expected ${CODE}\n")
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  string(APPEND _failed "stdout does not match: ${STDOUT}\n")
endif()
if(DEFINED NOT_STDOUT AND out MATCHES "${NOT_STDOUT}")
  string(APPEND _failed "stdout matches what it must not: ${NOT_STDOUT}\n")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  string(APPEND _failed "stderr does not match: ${STDERR}\n")
endif()
if(STDERR_EMPTY AND NOT err STREQUAL "")
  string(APPEND _failed "stderr is not empty\n")
endif()
if(_failed)
  message(FATAL_ERROR "${PROGRAM} ${ARGS}:\n${_failed}--- stdout ---\n${out}\n--- stderr ---\n${err}")
endif()
