# Real output of the CLI validated against the JSON Schemas in schema/ (docs/json.md), with
# python3-jsonschema. Included by tests/CMakeLists.txt, in its scope (ai_hwaccel_cli,
# Python3_EXECUTABLE, AI_HWACCEL_JSON_FOUND, AI_HWACCEL_FIXTURES_DIR). Every test is
# skipped (exit code 77) when `import jsonschema` fails.
#
#   registry.schema.json   detect --json (this machine, every fixture machine tree)
#   parse.schema.json      parse --json (every real capture a format of this build reads)
#   estimate|plan|training|cost.schema.json   the planning commands' --json
#   estimates.schema.json  estimate --json with several formats (--quant LIST|all)
#
# The invalid/ documents prove the schemas can say no: each breaks one rule.

if(NOT AI_HWACCEL_JSON_FOUND)
  return()
endif()

set(_validate "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/json_schema/validate.py"
              --schema-dir "${PROJECT_SOURCE_DIR}/schema")

# json_schema_test(<name> <schema> [validate.py options...] -- <cli args...>)
function(json_schema_test name schema)
  add_test(NAME json_schema_${name} COMMAND ${_validate} --schema ${schema} ${ARGN})
  set_tests_properties(json_schema_${name} PROPERTIES SKIP_RETURN_CODE 77)
endfunction()

# ---- detect ---------------------------------------------------------------------------
json_schema_test(detect_this_machine registry -- $<TARGET_FILE:ai_hwaccel_cli> detect --json)
json_schema_test(detect_timings registry -- $<TARGET_FILE:ai_hwaccel_cli> detect --json --timings)
json_schema_test(detect_measured_bandwidth registry -- $<TARGET_FILE:ai_hwaccel_cli> detect --json --measure-bandwidth)
file(GLOB _json_schema_machines LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-*" "${CMAKE_CURRENT_SOURCE_DIR}/machines/captured-*")
foreach(_m IN LISTS _json_schema_machines)
  if(IS_DIRECTORY "${_m}")
    get_filename_component(_name "${_m}" NAME)
    json_schema_test(machine_${_name} registry -- $<TARGET_FILE:ai_hwaccel_cli> detect --root "${_m}" --json)
  endif()
endforeach()

# ---- parse ----------------------------------------------------------------------------
# A few captures by name (one per kind of document: devices, host, system I/O) ...
foreach(_capture IN ITEMS
    "nvidia-smi/q_8x-h100-80gb-hbm3_driver535.161.08.txt"
    "nvidia-smi/topo-m_2x-nv12_8x-mlx5.txt"
    "rocm-smi/showproductname-json_mi250x.json"
    "neuron-ls/topology_trn1.32xlarge_16-devices-torus.txt"
    "lscpu/intel-i5-10400_cometlake_util-linux-2.39.txt"
    "ibstat/ibstat_a100-node_all-active_cx6dx.txt"
    "lsblk/json_default-columns_majmin-mountpoints.json")
  get_filename_component(_name "${_capture}" NAME_WE)
  string(MAKE_C_IDENTIFIER "${_name}" _name)
  json_schema_test(parse_${_name} parse -- $<TARGET_FILE:ai_hwaccel_cli> parse --json
                   "${AI_HWACCEL_FIXTURES_DIR}/${_capture}")
  # A capture absent from this checkout of the fixtures is not a failure of the schema.
  set_tests_properties(json_schema_parse_${_name} PROPERTIES SKIP_REGULAR_EXPRESSION "cannot open")
endforeach()
# ... and every capture at all: `parse` exits 1 on those it does not recognise.
if(IS_DIRECTORY "${AI_HWACCEL_FIXTURES_DIR}")
  json_schema_test(parse_every_capture parse --each "${AI_HWACCEL_FIXTURES_DIR}" --pass-over 1
                   -- $<TARGET_FILE:ai_hwaccel_cli> parse --json {})
endif()

# ---- planning commands (docs/cli-plan.md); exit code 1 = fits nowhere, JSON still printed
json_schema_test(estimate estimate -- $<TARGET_FILE:ai_hwaccel_cli>
                 estimate --device "H100 SXM" --model llama-3.1-8b --quant bf16 --json)
json_schema_test(estimate_fits_nowhere estimate --exit-codes 1 -- $<TARGET_FILE:ai_hwaccel_cli>
                 estimate --device "H100 SXM" --model llama-3.1-70b --quant bf16 --json)
json_schema_test(estimate_tensor_parallel estimate -- $<TARGET_FILE:ai_hwaccel_cli>
                 estimate --device "H100 SXM" --count 8 --model llama-3.1-70b --quant bf16 --json)
json_schema_test(estimate_moe_latent_kv estimate -- $<TARGET_FILE:ai_hwaccel_cli>
                 estimate --device "H100 SXM" --count 8 --model deepseek-v3 --quant Q4_K_M --json)
json_schema_test(estimate_params_only estimate -- $<TARGET_FILE:ai_hwaccel_cli>
                 estimate --device "H100 SXM" --params 7B --quant Q4_K_M --json)
json_schema_test(estimates_all estimates -- $<TARGET_FILE:ai_hwaccel_cli>
                 estimate --device "H100 SXM" --count 8 --model llama-3.1-70b --quant all --json)
json_schema_test(estimates_fits_nowhere estimates --exit-codes 1 -- $<TARGET_FILE:ai_hwaccel_cli>
                 estimate --device "RTX 4090" --model llama-3.1-405b --quant bf16,fp8 --json)
json_schema_test(plan_machine plan -- $<TARGET_FILE:ai_hwaccel_cli>
                 plan --root "${CMAKE_CURRENT_SOURCE_DIR}/machines/handmade-hgx-h100-8gpu-nvswitch"
                 --model llama-3.1-70b --json)
json_schema_test(plan_measured_bandwidth plan -- $<TARGET_FILE:ai_hwaccel_cli>
                 plan --model llama-3.2-1b --quant q4_k_m --allow-cpu --measure-bandwidth --json)
json_schema_test(plan_quant_list plan -- $<TARGET_FILE:ai_hwaccel_cli>
                 plan --device "RTX 4090" --count 2 --model llama-3.1-70b --quant Q8_0,Q4_K_M,Q2_K --json)
json_schema_test(plan_fits_nowhere plan --exit-codes 1 -- $<TARGET_FILE:ai_hwaccel_cli>
                 plan --device "RTX 4090" --model llama-3.1-70b --quant bf16 --json)
json_schema_test(training training -- $<TARGET_FILE:ai_hwaccel_cli>
                 training --model llama-3.1-8b --method lora --json)
json_schema_test(training_on_device training --exit-codes 0,1 -- $<TARGET_FILE:ai_hwaccel_cli>
                 training --model llama-3.1-8b --method dpo --policy lora --device "H100 SXM" --json)
json_schema_test(cost_all cost -- $<TARGET_FILE:ai_hwaccel_cli>
                 cost --model llama-3.1-8b --quant Q4_K_M --all --json)

# ---- the schemas reject what they should ----------------------------------------------
file(GLOB _json_schema_invalid "${CMAKE_CURRENT_SOURCE_DIR}/json_schema/invalid/*.json")
foreach(_doc IN LISTS _json_schema_invalid)
  get_filename_component(_name "${_doc}" NAME_WE)
  string(REGEX MATCH "^[a-z]+" _schema "${_name}") # registry-…, parse-…, estimate-…
  string(MAKE_C_IDENTIFIER "${_name}" _name)
  json_schema_test(rejects_${_name} ${_schema} --expect-invalid --file "${_doc}")
endforeach()
