# export_main --output: the file appears whole, is replaced on a second run, leaves no
# temporary file behind, and a folder that does not exist is an error (exit 1).
#   cmake -DPROGRAM=… -DMACHINE=dir -DWORK=dir -P output_file.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/ai-hwaccel.prom" "stale\n")
foreach(_run IN ITEMS 1 2)
  execute_process(COMMAND "${PROGRAM}" prometheus --root "${MACHINE}" --output "${WORK}/ai-hwaccel.prom"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "")
    message(FATAL_ERROR "run ${_run}: exit ${rc}, stdout '${out}', stderr '${err}'")
  endif()
endforeach()
file(READ "${WORK}/ai-hwaccel.prom" text)
if(NOT text MATCHES "^# HELP ai_hwaccel_build_info " OR NOT text MATCHES "ai_hwaccel_warnings{kind=\"probe_failed\"} 0\n$")
  message(FATAL_ERROR "unexpected content:\n${text}")
endif()
file(GLOB leftovers LIST_DIRECTORIES true "${WORK}/.*" "${WORK}/*")
if(NOT leftovers STREQUAL "${WORK}/ai-hwaccel.prom")
  message(FATAL_ERROR "files left in ${WORK}: ${leftovers}")
endif()
execute_process(COMMAND "${PROGRAM}" nfd --root "${MACHINE}" --output "${WORK}/no/such/folder/ai-hwaccel"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "cannot create")
  message(FATAL_ERROR "writing into a missing folder: exit ${rc}, stderr '${err}'")
endif()
