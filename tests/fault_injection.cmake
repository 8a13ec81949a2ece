# Fault injection at the CLI: `ai-hwaccel detect --json` on broken machine trees and with
# broken vendor tools on PATH must exit 0, print valid JSON with the CPU first, and carry
# the typed warning naming the tool or file (tests/unit/fault_injection.cpp covers the
# library side, with more faults).
#
# This file has two roles. Included by tests/CMakeLists.txt it defines the tests; run as a
# script (cmake -DCASE=… -DCLI=… -DFAKE_TOOL=… -DWORK=… -P fault_injection.cmake) it
# builds one case's tree or tool folder under WORK, runs the CLI and checks its output.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  set(_fault_cases
    meminfo_without_memtotal cpuinfo_binary pci_class_garbage pci_link_loop amdgpu_vram_empty
    replayed_timeout replayed_signal
    tool_garbage tool_empty tool_signal tool_exit_status tool_spew)
  foreach(_case IN LISTS _fault_cases)
    add_test(NAME fault_injection_cli_${_case}
             COMMAND "${CMAKE_COMMAND}" -DCASE=${_case} -DCLI=$<TARGET_FILE:ai_hwaccel_cli>
                     -DFAKE_TOOL=$<TARGET_FILE:ai_hwaccel_fake_tool>
                     "-DWORK=${CMAKE_CURRENT_BINARY_DIR}/fault_injection/${_case}"
                     -P "${CMAKE_CURRENT_LIST_FILE}")
    set_tests_properties(fault_injection_cli_${_case} PROPERTIES TIMEOUT 60)
  endforeach()
  return()
endif()

# --- Script mode: one case ----------------------------------------------------------------

cmake_minimum_required(VERSION 3.19) # string(JSON)
foreach(_v CASE CLI FAKE_TOOL WORK)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "fault_injection.cmake: -D${_v}=… is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
set(tree "${WORK}/tree")
set(bin "${WORK}/bin")

# The /proc files of a small, healthy machine (hand-made).
file(WRITE "${tree}/proc/cpuinfo" "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\nflags\t\t: fpu sse2\n")
file(WRITE "${tree}/proc/meminfo" "MemTotal:       16384000 kB\nMemAvailable:    8192000 kB\n")

set(mode "")
set(args detect --json --root "${tree}")
# What the case expects: a warning of this kind whose subject contains this text.
set(kind "")
set(subject "")
set(nvidia_query "nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,pci.device_id,memory.total,memory.used,memory.free,compute_cap,driver_version,power.limit,power.draw,temperature.gpu,utilization.gpu,clocks.max.memory,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,mig.mode.current --format=csv,noheader,nounits")

if(CASE STREQUAL "meminfo_without_memtotal")
  file(WRITE "${tree}/proc/meminfo" "MemFree:         1000000 kB\nMemAvailable:    8192000 kB\n")
  set(kind parse_error)
  set(subject "/proc/meminfo")
elseif(CASE STREQUAL "cpuinfo_binary")
  string(ASCII 1 2 3 127 _bytes)
  file(WRITE "${tree}/proc/cpuinfo" "${_bytes}${_bytes}\n${_bytes}")
  set(kind parse_error)
  set(subject "/proc/cpuinfo")
elseif(CASE STREQUAL "pci_class_garbage")
  file(WRITE "${tree}/sys/bus/pci/devices/0000:01:00.0/vendor" "0x10de\n")
  file(WRITE "${tree}/sys/bus/pci/devices/0000:01:00.0/class" "zz-not-hex\n")
  set(kind parse_error)
  set(subject "/sys/bus/pci/devices/0000:01:00.0/class")
elseif(CASE STREQUAL "pci_link_loop")
  file(MAKE_DIRECTORY "${tree}/sys/bus/pci/devices" "${tree}/sys/devices")
  file(CREATE_LINK "../../../devices/loop-b" "${tree}/sys/bus/pci/devices/0000:01:00.0" SYMBOLIC)
  file(CREATE_LINK "../bus/pci/devices/0000:01:00.0" "${tree}/sys/devices/loop-b" SYMBOLIC)
  set(kind read_error)
  set(subject "0000:01:00.0")
elseif(CASE STREQUAL "amdgpu_vram_empty")
  set(_dev "${tree}/sys/class/drm/card0/device")
  file(WRITE "${_dev}/vendor" "0x1002\n")
  file(WRITE "${_dev}/device" "0x740f\n")
  file(WRITE "${_dev}/product_name" "AMD Instinct MI210\n")
  file(WRITE "${_dev}/mem_info_vram_total" "")
  file(MAKE_DIRECTORY "${tree}/sys/bus/pci/drivers/amdgpu")
  file(CREATE_LINK "../../../../bus/pci/drivers/amdgpu" "${_dev}/driver" SYMBOLIC)
  set(kind parse_error)
  set(subject "mem_info_vram_total")
elseif(CASE STREQUAL "replayed_timeout")
  file(WRITE "${tree}/ai-hwaccel-tools/index" "timeout\t-\t${nvidia_query}\n")
  set(kind tool_timed_out)
  set(subject "nvidia-smi")
elseif(CASE STREQUAL "replayed_signal")
  file(WRITE "${tree}/ai-hwaccel-tools/index" "signal:11\t-\t${nvidia_query}\n")
  set(kind tool_signalled)
  set(subject "nvidia-smi")
elseif(CASE MATCHES "^tool_")
  # The live machine, with the fake tool as hl-smi (the Gaudi probe always runs it) first on
  # PATH; its misbehaviour comes from the environment (tests/tools/fake_tool.cpp).
  file(MAKE_DIRECTORY "${bin}")
  file(CREATE_LINK "${FAKE_TOOL}" "${bin}/hl-smi" SYMBOLIC)
  set(args detect --json --only gaudi)
  set(subject "hl-smi")
  if(CASE STREQUAL "tool_garbage")
    set(mode "garbage 65536")
    set(kind parse_error)
  elseif(CASE STREQUAL "tool_empty")
    set(mode "empty")
    set(kind parse_error)
  elseif(CASE STREQUAL "tool_signal")
    set(mode "signal 11")
    set(kind tool_signalled)
  elseif(CASE STREQUAL "tool_exit_status")
    set(mode "exit 3")
    set(kind tool_failed)
  elseif(CASE STREQUAL "tool_spew")
    set(mode "spew 100000000")
    set(kind output_truncated)
  endif()
endif()
if(kind STREQUAL "")
  message(FATAL_ERROR "fault_injection.cmake: unknown case '${CASE}'")
endif()

if(mode STREQUAL "")
  execute_process(COMMAND "${CLI}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
else()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PATH=${bin}:$ENV{PATH}" "AI_HWACCEL_FAKE_TOOL_MODE=${mode}"
                          "${CLI}" ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CASE}: `ai-hwaccel ${args}` exited with ${rc}: ${err}")
endif()

# Valid JSON, the CPU first, and the expected warning.
string(JSON devices ERROR_VARIABLE json_error LENGTH "${out}" devices)
if(json_error)
  message(FATAL_ERROR "${CASE}: not a registry in JSON (${json_error}):\n${out}")
endif()
if(devices LESS 1)
  message(FATAL_ERROR "${CASE}: no devices, not even the CPU:\n${out}")
endif()
string(JSON first_kind GET "${out}" devices 0 kind)
if(NOT first_kind STREQUAL "cpu")
  message(FATAL_ERROR "${CASE}: the first device is '${first_kind}', not the CPU")
endif()
string(JSON warnings LENGTH "${out}" warnings)
set(found FALSE)
if(warnings GREATER 0)
  math(EXPR last "${warnings} - 1")
  foreach(i RANGE ${last})
    string(JSON w_kind GET "${out}" warnings ${i} kind)
    string(JSON w_subject GET "${out}" warnings ${i} subject)
    string(FIND "${w_subject}" "${subject}" at)
    if(w_kind STREQUAL kind AND at GREATER -1)
      set(found TRUE)
    endif()
  endforeach()
endif()
if(NOT found)
  string(JSON all_warnings GET "${out}" warnings)
  message(FATAL_ERROR "${CASE}: no ${kind} warning about '${subject}' among: ${all_warnings}")
endif()
message(STATUS "${CASE}: exit 0, ${devices} device(s), ${kind} on ${subject}")
