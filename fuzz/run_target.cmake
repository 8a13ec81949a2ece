# One bounded run of a fuzz target, as a test: first every reproducer kept in
# fuzz/regressions/<target>/ (each must now run clean), then a short fuzzing run from the
# seed corpus. New inputs go to a scratch folder, never to the seeds.
#
#   cmake -DFUZZER=<binary> -DCORPUS=<seed folder> -DWORK=<scratch folder>
#         -DREGRESSIONS=<folder> -DSECONDS=<n> [-DEXTRA=<libFuzzer flags;…>] -P run_target.cmake
foreach(_v FUZZER CORPUS WORK REGRESSIONS SECONDS)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "run_target.cmake: ${_v} is not set")
  endif()
endforeach()
set(_common -rss_limit_mb=2048 -timeout=30 -malloc_limit_mb=2048 ${EXTRA})

file(GLOB _reproducers LIST_DIRECTORIES false "${REGRESSIONS}/*")
list(FILTER _reproducers EXCLUDE REGEX "/(README[^/]*|\\.gitkeep)$")
if(_reproducers)
  list(LENGTH _reproducers _n)
  message(STATUS "replaying ${_n} reproducer(s) from ${REGRESSIONS}")
  execute_process(COMMAND "${FUZZER}" ${_common} ${_reproducers} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "a reproducer in ${REGRESSIONS} still fails (exit ${_rc})")
  endif()
endif()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${FUZZER}" ${_common} -max_total_time=${SECONDS} -print_final_stats=1
                        "-artifact_prefix=${WORK}/" "${WORK}" "${CORPUS}"
                RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  file(GLOB _found "${WORK}/crash-*" "${WORK}/leak-*" "${WORK}/timeout-*" "${WORK}/oom-*")
  message(FATAL_ERROR "fuzzing found a failure (exit ${_rc}); input(s): ${_found}")
endif()
