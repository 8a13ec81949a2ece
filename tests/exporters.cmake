# The exporters (io/prometheus.hpp, io/nfd.hpp) end to end: a small program detects each
# fixture machine and prints its Prometheus exposition and NFD feature file;
# `promtool check metrics` (Debian: prometheus) must accept the first, and an independent
# checker (tests/exporters/check_nfd.py, Python with python3-yaml) the second, the
# DaemonSet manifest in deploy/ and every label name the exporter can write.
add_executable(ai_hwaccel_export_main "${CMAKE_CURRENT_SOURCE_DIR}/exporters/export_main.cpp")
target_link_libraries(ai_hwaccel_export_main PRIVATE ai_hwaccel::ai_hwaccel)
target_compile_options(ai_hwaccel_export_main PRIVATE ${AI_HWACCEL_WARNINGS})

file(GLOB _exporter_machines LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-*" "${CMAKE_CURRENT_SOURCE_DIR}/machines/captured-*")

find_program(AI_HWACCEL_PROMTOOL promtool)
if(AI_HWACCEL_PROMTOOL)
  foreach(_m IN LISTS _exporter_machines)
    get_filename_component(_name "${_m}" NAME)
    add_test(NAME exporters_promtool_${_name}
             COMMAND "${CMAKE_COMMAND}" -DPROGRAM=$<TARGET_FILE:ai_hwaccel_export_main>
                     "-DARGS=prometheus;--root;${_m}" "-DPROMTOOL=${AI_HWACCEL_PROMTOOL}"
                     "-DWORK=${CMAKE_CURRENT_BINARY_DIR}/exporters/${_name}.prom"
                     -P "${CMAKE_CURRENT_SOURCE_DIR}/exporters/promtool_check.cmake")
  endforeach()
else()
  message(STATUS "ai_hwaccel: promtool not found (Debian package: prometheus); "
                 "the `promtool check metrics` tests are skipped")
endif()

# The manifest and the labels: YAML that parses, label names and values valid under
# Kubernetes' rules (checked by the script's own regular expressions, not the library's
# validators). Exits 77 (skipped) where python3-yaml is missing.
add_test(NAME exporters_nfd_labels_and_manifest
         COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/exporters/check_nfd.py"
                 --exporter $<TARGET_FILE:ai_hwaccel_export_main>
                 --manifest "${PROJECT_SOURCE_DIR}/deploy/nfd-daemonset.yaml"
                 --work "${CMAKE_CURRENT_BINARY_DIR}/exporters"
                 ${_exporter_machines})
set_tests_properties(exporters_nfd_labels_and_manifest PROPERTIES SKIP_RETURN_CODE 77)

# --output replaces the file atomically and refuses nothing it should not.
add_test(NAME exporters_output_file
         COMMAND "${CMAKE_COMMAND}" -DPROGRAM=$<TARGET_FILE:ai_hwaccel_export_main>
                 "-DMACHINE=${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-hgx-h100-8gpu-nvswitch"
                 "-DWORK=${CMAKE_CURRENT_BINARY_DIR}/exporters/output"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/exporters/output_file.cmake")
