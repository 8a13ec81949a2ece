# `gather` and `watch` as a user meets them. Included by tests/CMakeLists.txt (in its scope:
# ai_hwaccel_cli, AI_HWACCEL_JSON_FOUND, expect_exit_code.cmake); run with -P, this same file
# is the check a test performs (MODE=gather or MODE=watch_json, below).
#
# gather: from a fixture machine into a folder or a tarball, then `detect --root` on what
# was gathered must print exactly what `detect --root` prints on the machine. watch: on
# fixture machines whose tools report live values (the HGX's nvidia-smi answer: 30 C,
# 71 W, no memory in use), two refreshes 0 s apart have zero deltas, alerts fire or not
# by their thresholds, and bad expressions are usage errors.

if(CMAKE_SCRIPT_MODE_FILE)
  # ---- the checks (cmake -DMODE=… -P cli_gather.cmake) ------------------------------------
  if(MODE STREQUAL "gather")
    # -DPROGRAM= -DMACHINE= -DWORK= -DTARBALL=ON|OFF -DJSON=ON|OFF [-DTARBALL_NAME=machine.tar.gz]
    file(REMOVE_RECURSE "${WORK}")
    file(MAKE_DIRECTORY "${WORK}")
    if(NOT TARBALL_NAME)
      set(TARBALL_NAME machine.tar.gz)
    endif()
    if(TARBALL)
      set(_output "${WORK}/${TARBALL_NAME}")
      set(_tree "${WORK}/extracted")
    else()
      set(_output "${WORK}/machine")
      set(_tree "${WORK}/machine")
    endif()
    execute_process(COMMAND "${PROGRAM}" gather --root "${MACHINE}" --output "${_output}"
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _said ERROR_VARIABLE _err)
    if(NOT _rc STREQUAL "0")
      message(FATAL_ERROR "gather: exit code ${_rc}\n${_said}${_err}")
    endif()
    if(NOT _said MATCHES "gathered [0-9]+ file\\(s\\).*review it before sharing")
      message(FATAL_ERROR "gather: no summary and reminder in:\n${_said}")
    endif()
    if(TARBALL)
      # As private as a gathered folder (0700): the archive holds the same serials and names.
      execute_process(COMMAND stat -c %a "${_output}" OUTPUT_VARIABLE _mode OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(NOT _mode STREQUAL "600")
        message(FATAL_ERROR "the tarball's mode is ${_mode}, expected 600")
      endif()
      file(MAKE_DIRECTORY "${_tree}")
      execute_process(COMMAND "${CMAKE_COMMAND}" -E tar xf "${_output}" WORKING_DIRECTORY "${_tree}"
                      RESULT_VARIABLE _rc)
      if(NOT _rc STREQUAL "0")
        message(FATAL_ERROR "the tarball does not extract (${_rc})")
      endif()
    endif()
    set(_json)
    if(JSON)
      set(_json --json)
    endif()
    execute_process(COMMAND "${PROGRAM}" detect --root "${MACHINE}" ${_json}
                    RESULT_VARIABLE _rc1 OUTPUT_VARIABLE _expected ERROR_VARIABLE _expected_err)
    execute_process(COMMAND "${PROGRAM}" detect --root "${_tree}" ${_json}
                    RESULT_VARIABLE _rc2 OUTPUT_VARIABLE _got ERROR_VARIABLE _got_err)
    if(NOT _rc1 STREQUAL "0" OR NOT _rc2 STREQUAL "0")
      message(FATAL_ERROR "detect: exit codes ${_rc1} (machine) and ${_rc2} (gathered)")
    endif()
    if(NOT _got STREQUAL _expected OR NOT _got_err STREQUAL _expected_err)
      file(WRITE "${WORK}/expected.txt" "${_expected}${_expected_err}")
      file(WRITE "${WORK}/got.txt" "${_got}${_got_err}")
      message(FATAL_ERROR "detect on the gathered tree differs from the machine: see ${WORK}/expected.txt and got.txt")
    endif()
  elseif(MODE STREQUAL "watch_json")
    # -DPROGRAM= -DMACHINE=: two refreshes as JSON Lines, each an object, deltas zero.
    execute_process(COMMAND "${PROGRAM}" watch --root "${MACHINE}" --count 2 --interval 0 --json
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out)
    if(NOT _rc STREQUAL "0")
      message(FATAL_ERROR "watch --json: exit code ${_rc}")
    endif()
    string(REGEX REPLACE "\n$" "" _out "${_out}")
    string(REPLACE ";" "\\;" _out "${_out}")
    string(REPLACE "\n" ";" _lines "${_out}")
    list(LENGTH _lines _n)
    if(NOT _n EQUAL 2)
      message(FATAL_ERROR "watch --json --count 2: ${_n} lines, expected 2")
    endif()
    set(_refresh 0)
    foreach(_line IN LISTS _lines)
      math(EXPR _refresh "${_refresh} + 1")
      string(JSON _r ERROR_VARIABLE _bad GET "${_line}" refresh)
      if(_bad OR NOT _r EQUAL _refresh)
        message(FATAL_ERROR "line ${_refresh} is not a refresh object: ${_bad}\n${_line}")
      endif()
      string(JSON _devices LENGTH "${_line}" devices)
      if(_devices LESS 1)
        message(FATAL_ERROR "line ${_refresh}: no devices")
      endif()
      math(EXPR _last "${_devices} - 1")
      foreach(_i RANGE ${_last})
        string(JSON _delta TYPE "${_line}" devices ${_i} delta)
        if(_refresh EQUAL 1 AND NOT _delta STREQUAL "NULL")
          message(FATAL_ERROR "the first refresh has a delta")
        endif()
        if(_refresh EQUAL 2)
          foreach(_field IN ITEMS temperature_c power_draw_watts memory_used_bytes utilization_percent)
            string(JSON _d GET "${_line}" devices ${_i} delta ${_field})
            if(NOT _d STREQUAL "0" AND NOT _d STREQUAL "0.0" AND NOT _d STREQUAL "null")
              message(FATAL_ERROR "device ${_i}: delta of ${_field} is ${_d}, expected 0")
            endif()
          endforeach()
          string(JSON _t GET "${_line}" devices ${_i} temperature_c)
          if(NOT _t MATCHES "^[0-9]")
            message(FATAL_ERROR "device ${_i}: no temperature in ${_line}")
          endif()
        endif()
      endforeach()
    endforeach()
  elseif(MODE STREQUAL "full_output")
    # -DPROGRAM= "-DARGS=a;b": stdout is /dev/full, so nothing printed can be written; the
    # command must say so and exit 1, not 0 (and watch must stop, not refresh for nobody;
    # the limit only keeps a hang from holding the test run).
    execute_process(COMMAND "${PROGRAM}" ${ARGS} OUTPUT_FILE /dev/full ERROR_VARIABLE _err RESULT_VARIABLE _rc
                    TIMEOUT 120)
    if(NOT _rc STREQUAL "1" OR NOT _err MATCHES "ai-hwaccel: cannot write the output: [A-Za-z]")
      message(FATAL_ERROR "${ARGS} > /dev/full: exit code ${_rc}, expected 1 and a message\n${_err}")
    endif()
  else()
    message(FATAL_ERROR "cli_gather.cmake: unknown MODE '${MODE}'")
  endif()
  return()
endif()

# ---- the tests ------------------------------------------------------------------------------
set(_exit "${CMAKE_CURRENT_SOURCE_DIR}/expect_exit_code.cmake")
set(_self "${CMAKE_CURRENT_LIST_FILE}")
set(_hgx "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-hgx-h100-8gpu-nvswitch")
set(_gaudi "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-gaudi3-8x-node")
set(_work "${CMAKE_CURRENT_BINARY_DIR}/cli-gather")
set(_json OFF)
if(AI_HWACCEL_JSON_FOUND)
  set(_json ON)
endif()

function(cli_gather_exit name code)
  add_test(NAME ${name}
           COMMAND "${CMAKE_COMMAND}" -DPROGRAM=$<TARGET_FILE:ai_hwaccel_cli> "-DARGS=${ARGN}" -DEXPECTED=${code}
                   -P "${_exit}")
endfunction()
function(cli_gather_output name regex)
  add_test(NAME ${name} COMMAND ai_hwaccel_cli ${ARGN})
  set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${regex}")
endfunction()

# ---- gather: every fixture machine into a folder, and two as tarballs -----------------------
file(GLOB _gather_machines LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-*" "${CMAKE_CURRENT_SOURCE_DIR}/machines/captured-*")
foreach(_m IN LISTS _gather_machines)
  get_filename_component(_name "${_m}" NAME)
  add_test(NAME cli_gather_${_name}
           COMMAND "${CMAKE_COMMAND}" -DMODE=gather -DPROGRAM=$<TARGET_FILE:ai_hwaccel_cli> "-DMACHINE=${_m}"
                   "-DWORK=${_work}/${_name}" -DTARBALL=OFF -DJSON=${_json} -P "${_self}")
endforeach()
find_program(AI_HWACCEL_TAR_FOR_TESTS tar)
if(AI_HWACCEL_TAR_FOR_TESTS)
  foreach(_m IN ITEMS "${_hgx}" "${_gaudi}")
    get_filename_component(_name "${_m}" NAME)
    add_test(NAME cli_gather_tarball_${_name}
             COMMAND "${CMAKE_COMMAND}" -DMODE=gather -DPROGRAM=$<TARGET_FILE:ai_hwaccel_cli> "-DMACHINE=${_m}"
                     "-DWORK=${_work}/tarball-${_name}" -DTARBALL=ON -DJSON=${_json} -P "${_self}")
  endforeach()
  # A name in capitals asks for the same archive (it was made a folder of that name).
  add_test(NAME cli_gather_tarball_capitals
           COMMAND "${CMAKE_COMMAND}" -DMODE=gather -DPROGRAM=$<TARGET_FILE:ai_hwaccel_cli> "-DMACHINE=${_hgx}"
                   "-DWORK=${_work}/tarball-capitals" -DTARBALL=ON -DTARBALL_NAME=MACHINE.TAR.GZ -DJSON=${_json}
                   -P "${_self}")
endif()
# Errors: no output (2), an unknown option (2), a missing root (2), a folder that is not
# empty (1: the build's test folder, refused before anything is written).
cli_gather_exit(cli_gather_no_output 2 gather --root "${_hgx}")
cli_gather_output(cli_gather_no_output_message "gather needs --output" gather --root "${_hgx}")
cli_gather_exit(cli_gather_unknown_option 2 gather --output "${_work}/never" --frobnicate)
cli_gather_exit(cli_gather_root_missing 2 gather --root /nonexistent/ai-hwaccel --output "${_work}/never")
cli_gather_exit(cli_gather_not_empty 1 gather --root "${_hgx}" --output "${CMAKE_CURRENT_BINARY_DIR}")
cli_gather_output(cli_gather_not_empty_message "exists and is not empty \\(use --force"
  gather --root "${_hgx}" --output "${CMAKE_CURRENT_BINARY_DIR}")
# Onto the tree it reads, even with --force and by another spelling: refused (2) before
# anything is read or written (the tree would lose what the detection did not read). The
# root here is the build's test folder, so that a regression writes nothing into the sources.
cli_gather_exit(cli_gather_onto_root 2 gather --root "${CMAKE_CURRENT_BINARY_DIR}" --output "${CMAKE_CURRENT_BINARY_DIR}" --force)
cli_gather_output(cli_gather_onto_root_message "is the --root tree itself"
  gather --root "${CMAKE_CURRENT_BINARY_DIR}" --output "${CMAKE_CURRENT_BINARY_DIR}/cli-gather/.." --force)

# ---- watch ----------------------------------------------------------------------------------
# Two refreshes of the same tree: the second shows every change as +0.0.
cli_gather_output(cli_watch_deltas_zero
  "refresh 1 at [0-9T:Z-]+\n  0 +cuda_gpu +NVIDIA H100 80GB HBM3 +used 0\\.0 GiB +free 79\\.1 GiB +util 0\\.0% +temp 30\\.0 C +power 71\\.0 W\n.*refresh 2 at .*temp 30\\.0 C \\(\\+0\\.0\\) +power 71\\.0 W \\(\\+0\\.0\\)"
  watch --root "${_hgx}" --count 2 --interval 0)
# The Gaudi node's tool says 36 C and 228 W for its first device.
cli_gather_output(cli_watch_gaudi "temp 36\\.0 C .*power 228\\.0 W" watch --root "${_gaudi}" --count 1 --interval 0)
# Alerts: 30 C > 25 fires (exit 3, a line on stderr naming it); 85 C, 400 W and 90 % of
# memory in use do not (exit 0).
cli_gather_exit(cli_watch_alert_fires 3 watch --root "${_hgx}" --count 2 --interval 0 --alert temperature>25)
cli_gather_output(cli_watch_alert_message "alert temperature>25: refresh 1, cuda_gpu 0 NVIDIA H100 80GB HBM3: temperature is 30\\.0"
  watch --root "${_hgx}" --count 1 --interval 0 --alert temperature>25)
# A memory alert reads in GiB, as the table does (the rule may be in any unit).
cli_gather_output(cli_watch_alert_memory_gib "memory_free is 79\\.1 GiB\n"
  watch --root "${_hgx}" --count 1 --interval 0 --alert memory_free>1GiB)
cli_gather_exit(cli_watch_alert_power_fires 3 watch --root "${_hgx}" --count 1 --interval 0 --alert power>=71W)
cli_gather_exit(cli_watch_alert_quiet 0
  watch --root "${_hgx}" --count 2 --interval 0 --alert temperature>85 --alert power>400 --alert memory_used>90%)
cli_gather_exit(cli_watch_alert_memory_free 3 watch --root "${_hgx}" --count 1 --interval 0 --alert memory_free>70GiB)
# Metric names and units are read in any case, as --memory reads its units.
cli_gather_exit(cli_watch_alert_any_case 3 watch --root "${_hgx}" --count 1 --interval 0 --alert Memory_Free>70gib)
cli_gather_exit(cli_watch_alert_power_lower_case 3 watch --root "${_hgx}" --count 1 --interval 0 --alert POWER>=71w)
# Bad expressions and options are usage errors that name what is wrong.
cli_gather_exit(cli_watch_bad_alert 2 watch --root "${_hgx}" --count 1 --alert temp>85)
cli_gather_output(cli_watch_bad_alert_message "--alert: 'temp>85' is not METRIC OP VALUE" watch --count 1 --alert temp>85)
cli_gather_exit(cli_watch_bad_alert_unit 2 watch --root "${_hgx}" --count 1 --alert temperature>85%)
cli_gather_exit(cli_watch_bad_alert_number 2 watch --root "${_hgx}" --count 1 --alert power>lots)
cli_gather_exit(cli_watch_bad_count 2 watch --root "${_hgx}" --count 0)
cli_gather_exit(cli_watch_bad_interval 2 watch --root "${_hgx}" --count 1 --interval soon)
cli_gather_exit(cli_watch_unknown_option 2 watch --root "${_hgx}" --count 1 --frobnicate)
if(AI_HWACCEL_JSON_FOUND)
  add_test(NAME cli_watch_json_lines
           COMMAND "${CMAKE_COMMAND}" -DMODE=watch_json -DPROGRAM=$<TARGET_FILE:ai_hwaccel_cli> "-DMACHINE=${_hgx}"
                   -P "${_self}")
endif()

# A machine that changes between refreshes: a GPU that vanishes (the rest renumbered), a
# tool that starts failing (its warning on stderr once, in the JSON lines, the devices still
# matched), a reader that goes away (the watch ends, status 1 and no message; during a long
# wait at once, status 3 when an alert fired).
add_test(NAME cli_watch_changes
         COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/cli/watch_changes.py"
                 $<TARGET_FILE:ai_hwaccel_cli> "${_hgx}" "${_work}/watch-changes")
# A share past 100 % could never fire; a missing root names the help, as every usage error.
cli_gather_exit(cli_watch_alert_utilization_past_100 2 watch --root "${_hgx}" --count 1 --alert utilization>150%)
cli_gather_exit(cli_watch_alert_utilization_past_100_bare 2 watch --root "${_hgx}" --count 1 --alert utilization>150)
cli_gather_output(cli_watch_root_missing_hint "is not a directory\nrun 'ai-hwaccel help watch'"
  watch --root /nonexistent/ai-hwaccel --count 1)

# ---- options as every command reads them (docs/cli.md) -----------------------------------------
# `--name=VALUE` as well as `--name VALUE`; an archive gather cannot make is refused rather
# than written as a folder of that name.
cli_gather_exit(cli_gather_output_equals 0 gather --root "${_hgx}" --output=${_work}/equals --force)
cli_gather_exit(cli_gather_archive_unknown 2 gather --root "${_hgx}" --output "${_work}/machine.tar.bz2")
cli_gather_output(cli_gather_archive_unknown_message "gather writes a folder, \\.tar, \\.tar\\.gz or \\.tgz, not \\.tar\\.bz2"
  gather --root "${_hgx}" --output "${_work}/machine.tar.bz2")
cli_gather_exit(cli_gather_archive_unknown_capitals 2 gather --root "${_hgx}" --output "${_work}/machine.TAR.XZ")
cli_gather_output(cli_gather_output_missing_message "--output needs a value" gather --output --root "${_hgx}")
cli_gather_exit(cli_watch_options_equals 3 watch --root=${_hgx} --count=1 --interval=0 --alert=temperature>25 --alert=power>1000)
cli_gather_exit(cli_watch_interval_empty 2 watch --root "${_hgx}" --count 1 --interval=)

# ---- output that cannot be written ---------------------------------------------------------
# stdout on a full device: exit 1 with a message, for a one-shot command and for watch,
# which must stop at its first refresh instead of refreshing for nobody.
if(EXISTS /dev/full)
  foreach(_case IN ITEMS "catalogue" "detect|--root|${_hgx}|--json" "watch|--root|${_hgx}|--interval|0")
    string(REPLACE "|" ";" _args "${_case}")
    list(GET _args 0 _name)
    add_test(NAME cli_output_full_${_name}
             COMMAND "${CMAKE_COMMAND}" -DMODE=full_output -DPROGRAM=$<TARGET_FILE:ai_hwaccel_cli> "-DARGS=${_args}"
                     -P "${_self}")
  endforeach()
endif()
# A reader that goes away with SIGPIPE ignored: cli_watch_changes (above) checks it.
