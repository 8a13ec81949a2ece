# Checks that a shared library's dynamic symbol table defines only the C ABI: every
# defined symbol starts with `ahw_`, and the ABI's entry points are there (so an empty
# or unreadable table cannot pass).
#   cmake -DNM=/usr/bin/nm -DLIBRARY=libai_hwaccel_c.so -P check_exports.cmake
cmake_minimum_required(VERSION 3.21)
execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIBRARY} failed (${rc}): ${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(foreign "")
set(ours "")
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  # "<address> <type> <name>"; the name is the last field.
  string(REGEX REPLACE "^.* " "" name "${line}")
  if(name MATCHES "^ahw_")
    list(APPEND ours "${name}")
  else()
    list(APPEND foreign "${line}")
  endif()
endforeach()
if(foreign)
  list(LENGTH foreign n)
  list(JOIN foreign "\n  " shown)
  message(FATAL_ERROR "${LIBRARY} exports ${n} symbol(s) outside the C ABI:\n  ${shown}")
endif()
foreach(required IN ITEMS ahw_version ahw_last_error ahw_detect ahw_registry_free ahw_device_count
                          ahw_device_get ahw_warning_count ahw_warning_get ahw_registry_to_json
                          ahw_registry_from_json ahw_string_free ahw_estimate ahw_status_name
                          ahw_estimate_at_bandwidth ahw_measure_memory_bandwidth ahw_detect_measured
                          ahw_has_accelerator ahw_accelerator_memory ahw_total_memory ahw_best_device ahw_plan
                          ahw_plan_cluster ahw_catalogue_registry)
  if(NOT required IN_LIST ours)
    message(FATAL_ERROR "${LIBRARY} does not export ${required}; it exports: ${ours}")
  endif()
endforeach()
list(LENGTH ours n)
message(STATUS "${LIBRARY}: ${n} symbols, all ahw_*")
