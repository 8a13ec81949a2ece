# `ai-hwaccel plan --nodes`: the registries of two captured machine trees, written by the CLI's
# own `detect --root … --json` as an operator would on each node, planned as one cluster.
# cmake -DPROGRAM=<cli> -DMACHINES=<tests/machines> -DWORK=<scratch dir>
#       [-DPYTHON=<python3> -DVALIDATE=<json_schema/validate.py> -DSCHEMA_DIR=<schema>] -P cli_plan_nodes.cmake
#
# The facts checked: Llama 3.1 405B in bf16 needs about 759 GiB, more than one 8 x H100 node
# holds after the 10 % headroom (576 GiB) and less than two; the IB node's eight 400 Gb/s
# ports give 50 GB/s each way between two such nodes; the HGX tree has no inter-node port,
# so it is joined to the IB node only over a network --network assumes (25 Gb/s: 3.1 GB/s).

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# run(<expected exit code> <stdout regex> <stderr regex> <args…>): "" matches anything.
function(run expected out_re err_re)
  execute_process(COMMAND "${PROGRAM}" ${ARGN} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${expected}")
    message(FATAL_ERROR "${ARGN}: exit code ${rc}, expected ${expected}\n${out}\n${err}")
  endif()
  if(NOT out_re STREQUAL "" AND NOT out MATCHES "${out_re}")
    message(FATAL_ERROR "${ARGN}: stdout does not match ${out_re}:\n${out}")
  endif()
  if(NOT err_re STREQUAL "" AND NOT err MATCHES "${err_re}")
    message(FATAL_ERROR "${ARGN}: stderr does not match ${err_re}:\n${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

foreach(_pair IN ITEMS "ib-a;handmade-ib-cluster-node-8gpu" "ib-b;handmade-ib-cluster-node-8gpu"
                       "hgx;handmade-hgx-h100-8gpu-nvswitch")
  list(GET _pair 0 _name)
  list(GET _pair 1 _tree)
  execute_process(COMMAND "${PROGRAM}" detect --root "${MACHINES}/${_tree}" --json
                  OUTPUT_FILE "${WORK}/${_name}.json" RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "detect --root ${_tree} --json: exit code ${rc}")
  endif()
endforeach()
file(WRITE "${WORK}/not-json.json" "this is not a registry\n")

# Two IB nodes: 8-way tensor parallel in each, one pipeline hop over InfiniBand.
run(0 "devices: 2 node\\(s\\) \\(detected: ib-a ib-b\\).*quantization: BF16\n.*strategy: tensor_pipeline: 16 device\\(s\\) per replica \\(tensor-parallel 8, 2 stage\\(s\\)\\).*nodes: replica 0 spans 2 of 2; 1 hop\\(s\\) between nodes a token, over infiniband at 50\\.0 GB/s each way.*\nib-a +1 +NVIDIA .*\nib-b +8 +NVIDIA [^\n]*\n[a-z]"
    "" plan --nodes ib-a.json,ib-b.json --model llama-3.1-405b --quant bf16)
# An IB node and a node without a port: not joined, so 405B in bf16 fits nowhere, and the
# note says how their fabrics differ.
run(1 "fits: no: the nodes cannot be joined.*not joined \\(no inter-node network in common\\): hgx"
    "note: hgx: no active inter-node port; ib-a: InfiniBand" plan --nodes ib-a.json,hgx.json --model llama-3.1-405b
    --quant bf16)
# auto on the same two: a smaller format on the IB node alone, the other named.
run(0 "quantization: (Q|FP|IQ|MX)[^\n]*\\(auto: the highest-quality format that fits\\).*nodes: replica 0 spans 1 of 2\nnodes left out: not joined \\(no inter-node network in common\\): hgx\n"
    "" plan --nodes ib-a.json,hgx.json --model llama-3.1-405b)
# --network joins them over the assumed link, the slower hop.
run(0 "network: 25 Gb/s each way between nodes that share no detected network.*over ethernet \\(some nodes joined by the --network link\\) at 3\\.1 GB/s each way"
    "" plan --nodes ib-a.json,hgx.json --network 25 --model llama-3.1-405b --quant bf16)

# Files of one name in two folders: each node is named by its path.
file(MAKE_DIRECTORY "${WORK}/gpu01" "${WORK}/gpu02")
file(COPY_FILE "${WORK}/ib-a.json" "${WORK}/gpu01/registry.json")
file(COPY_FILE "${WORK}/ib-a.json" "${WORK}/gpu02/registry.json")
run(0 "devices: 2 node\\(s\\) \\(detected: gpu01/registry gpu02/registry\\)" ""
    plan --nodes gpu01/registry.json,gpu02/registry.json --model llama-3.1-405b --quant bf16)

# Files that cannot be read are errors (exit code 1), the file named.
run(1 "" "cannot open 'missing\\.json'" plan --nodes ib-a.json,missing.json --model llama-3.1-8b)
run(1 "" "--nodes: not-json: " plan --nodes not-json.json --model llama-3.1-8b)
# Usage errors (exit code 2).
run(2 "" "--nodes cannot be combined with --device" plan --nodes ib-a.json --device "H100 SXM" --model llama-3.1-8b)
run(2 "" "--nodes: no file given" plan --nodes , --model llama-3.1-8b)
run(2 "" "--network joins nodes" plan --network 400 --model llama-3.1-8b)
run(2 "" "--per-node needs --network" plan --device "H100 SXM" --count 16 --per-node 8 --model llama-3.1-8b)
run(2 "" "--per-node needs --device" plan --per-node 8 --network 400 --model llama-3.1-8b)
run(2 "" "--network: 'fast' is not a speed" plan --nodes ib-a.json --network fast --model llama-3.1-8b)

# The JSON document: the cluster's nodes, its hop, each shard's node.
if(DEFINED VALIDATE)
  run(0 "\"devices_from\": \"nodes\"" "" plan --nodes ib-a.json,ib-b.json --model llama-3.1-405b --quant bf16 --json)
  if(NOT last_out MATCHES "\"inter_node_hops\": 1,.*\"kind\": \"infiniband\".*\"node\": \"ib-b\"")
    message(FATAL_ERROR "plan --nodes --json: no hop or node in:\n${last_out}")
  endif()
  file(WRITE "${WORK}/plan.json" "${last_out}")
  execute_process(COMMAND "${PYTHON}" "${VALIDATE}" --schema-dir "${SCHEMA_DIR}" --schema plan
                          --file "${WORK}/plan.json" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 77)
    message(STATUS "jsonschema not installed: the document was not validated")
  elseif(NOT rc EQUAL 0)
    message(FATAL_ERROR "plan --nodes --json does not follow schema/plan.schema.json:\n${out}")
  endif()
endif()
