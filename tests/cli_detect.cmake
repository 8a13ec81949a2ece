# `ai-hwaccel detect`'s output options, colour and every command's help, as a user meets
# them (docs/cli.md). Included by tests/CMakeLists.txt: runs in its scope (ai_hwaccel_cli,
# AI_HWACCEL_JSON_FOUND, Python3_EXECUTABLE). Every detect case runs on a fixture machine
# (tests/machines/<machine>, whose expected.json says what it holds), never on this one.
# Values matched follow from expected.json: the HGX node has a CPU and eight H100s of
# 85520809984 bytes (79.6 GiB; 637.2 GiB together), on PCI buses 19, 3b, 4c, 5d, 9b, bb,
# cb and db, 3350 GB/s from the catalogue; the RTX 4090 workstation has the GPU (24.0 GiB),
# an integrated Intel GPU sharing the host's 62.6 GiB, and llvmpipe; the Lunar Lake
# laptop a CPU and an NPU, both 15.6 GiB (the host's memory, which the NPU works from).

set(_expect "${CMAKE_CURRENT_SOURCE_DIR}/cli/expect.cmake")
set(_machines "${CMAKE_CURRENT_SOURCE_DIR}/machines")
set(_hgx "${_machines}/handmade-hgx-h100-8gpu-nvswitch")
set(_rtx "${_machines}/handmade-workstation-rtx4090")
set(_npu "${_machines}/handmade-laptop-intel-npu")
set(_mac "${_machines}/handmade-macbook-pro-m1pro")
set(_pod "${_machines}/handmade-k8s-pod-graviton2-cgroup-v1")
set(_trn "${_machines}/handmade-trn1-32xlarge")
set(_mi300x "${_machines}/handmade-mi300x-4gpu-xgmi")
set(_max "${_machines}/handmade-max1550-2card-xe")
# The two Max 1550 cards as a process with ZE_FLAT_DEVICE_HIERARCHY=COMPOSITE sees them: a
# copy of the tree with that variable in its /proc/self/environ.
set(_max_composite "${CMAKE_CURRENT_BINARY_DIR}/cli_detect_max1550_composite")
file(REMOVE_RECURSE "${_max_composite}")
file(COPY "${_max}/" DESTINATION "${_max_composite}")
file(WRITE "${_max_composite}/proc/self/environ" "ZE_FLAT_DEVICE_HIERARCHY=COMPOSITE\n")
# The Lunar Lake laptop without /proc (its NPU's accel node and PCI function only): neither
# the CPU's nor the NPU's memory can be known there.
set(_npu_no_proc "${CMAKE_CURRENT_BINARY_DIR}/cli_detect_npu_without_proc")
file(REMOVE_RECURSE "${_npu_no_proc}")
file(COPY "${_npu}/sys" "${_npu}/dev" DESTINATION "${_npu_no_proc}")
# The MacBook whose sysctl capture names the chip only (hand-made from its tree): the GPU's
# and the Neural Engine's memory is system_profiler's, the CPU's is unknown.
set(_mac_no_memsize "${CMAKE_CURRENT_BINARY_DIR}/cli_detect_mac_without_memsize")
file(REMOVE_RECURSE "${_mac_no_memsize}")
file(COPY "${_mac}/ai-hwaccel-tools" DESTINATION "${_mac_no_memsize}")
file(WRITE "${_mac_no_memsize}/ai-hwaccel-tools/sysctl.txt" "machdep.cpu.brand_string: Apple M1 Pro\n")

# cli_expect(<name> [CODE n] [STDOUT regex] [NOT_STDOUT regex] [STDERR regex] [STDERR_EMPTY]
#            ARGS <arguments>...): runs the CLI through cli/expect.cmake. Regexes hold no ';'.
function(cli_expect name)
  cmake_parse_arguments(PARSE_ARGV 1 _x "STDERR_EMPTY" "CODE;STDOUT;NOT_STDOUT;STDERR" "ARGS")
  set(_defs "")
  foreach(_k IN ITEMS CODE STDOUT NOT_STDOUT STDERR)
    if(DEFINED _x_${_k})
      list(APPEND _defs "-D${_k}=${_x_${_k}}")
    endif()
  endforeach()
  if(_x_STDERR_EMPTY)
    list(APPEND _defs -DSTDERR_EMPTY=1)
  endif()
  add_test(NAME ${name}
           COMMAND "${CMAKE_COMMAND}" -DPROGRAM=$<TARGET_FILE:ai_hwaccel_cli> "-DARGS=${_x_ARGS}" ${_defs} -P "${_expect}")
endfunction()

# ---- --summary ------------------------------------------------------------------------------
cli_expect(cli_detect_summary_hgx CODE 0 STDERR_EMPTY
  STDOUT "^devices: 9 \\(cpu 1, gpu 8\\)\naccelerators: 8, 637\\.2 GiB of memory in all\nbest: NVIDIA H100 80GB HBM3 \\(#1, cuda_gpu, 79\\.6 GiB, 3350 GB/s\\)\n$"
  ARGS detect --root "${_hgx}" --summary)
# The software renderer is listed but no accelerator; the integrated GPU's shared memory
# (the host's, which the Intel probe gives it, not the smaller Vulkan heap) counts once:
# 24.0 + 62.6 GiB.
cli_expect(cli_detect_summary_rtx4090 CODE 0
  STDOUT "^devices: 4 \\(cpu 1, gpu 3 of which 1 software\\)\naccelerators: 2, 86\\.5 GiB of memory in all\nbest: NVIDIA GeForce RTX 4090 \\(#1, cuda_gpu, 24\\.0 GiB, 1008 GB/s\\)\n$"
  ARGS detect --root "${_rtx}" --summary)
# Apple silicon: the CPU, the GPU and the Neural Engine draw on one 16 GiB pool, counted once.
cli_expect(cli_detect_summary_unified CODE 0
  STDOUT "^devices: 3 \\(cpu 1, gpu 1, npu 1\\)\naccelerators: 2, 16\\.0 GiB of memory in all\nbest: Apple M1 Pro \\(#1, metal_gpu, 16\\.0 GiB, 200 GB/s\\)\n$"
  STDERR_EMPTY
  ARGS detect --root "${_mac}" --summary)
cli_expect(cli_detect_summary_no_accelerator CODE 0
  STDOUT "^devices: 1 \\(cpu 1\\)\naccelerators: none found\nbest: Arm Neoverse-N1 \\(#0, cpu, 0\\.5 GiB\\)\n$"
  ARGS detect --root "${_pod}" --summary)
cli_expect(cli_detect_summary_family CODE 0
  STDOUT "^devices: 1 \\(npu 1\\)\naccelerators: 1, 15\\.6 GiB of memory in all\nbest: Intel NPU \\(Lunar Lake\\) \\(#1, intel_npu, 15\\.6 GiB\\)\n$"
  ARGS detect --root "${_npu}" --summary --family npu)
cli_expect(cli_detect_summary_memory_unknown CODE 0
  STDOUT "^devices: 1 \\(npu 1\\)\naccelerators: 1, memory unknown\nbest: Intel NPU \\(Lunar Lake\\) \\(#1, intel_npu, memory unknown\\)\n$"
  STDERR "/proc/meminfo: read_error"
  ARGS detect --root "${_npu_no_proc}" --summary --family npu)
cli_expect(cli_detect_summary_timings CODE 0
  STDOUT "^devices: 9 .*\nprobe +state +elapsed +devices +warnings\nhost +ran +[0-9.]+ ms"
  ARGS detect --root "${_hgx}" --summary --timings)

# ---- the host part of the table ---------------------------------------------------------------
# The workstation's SATA disk has no size file in its capture: its size is unknown, not 0 GB.
cli_expect(cli_detect_storage_size_unknown CODE 0 STDERR_EMPTY
  STDOUT "\nstorage: sda +hdd +size unknown *\n" NOT_STDOUT "storage: [^\n]* 0\\.0 GB"
  ARGS detect --root "${_rtx}")

# The pod's cgroup v1 memory limit (512 MiB) is printed as such, with the room left under it
# (the limit less its working set of 320 MiB); the HGX node has none.
cli_expect(cli_detect_memory_cgroup_limit CODE 0
  STDOUT "\nmemory: total [^\n]*, cgroup limit 0\\.5 GiB \\(sysfs\\), 0\\.2 GiB of it free\n"
  ARGS detect --root "${_pod}")
cli_expect(cli_detect_memory_no_cgroup_limit CODE 0
  STDOUT "\nmemory: total [^\n]*, no cgroup limit found\n"
  ARGS detect --root "${_hgx}")

# ---- --family -------------------------------------------------------------------------------
cli_expect(cli_detect_family_gpu CODE 0
  STDOUT "^#  kind +name +memory +pci\n1  cuda_gpu  NVIDIA H100 80GB HBM3  79\\.6 GiB \\(tool\\)  0000:19:00\\.0\n.*\n8  cuda_gpu  NVIDIA H100 80GB HBM3  79\\.6 GiB \\(tool\\)  0000:db:00\\.0\n\ncpu: "
  NOT_STDOUT "\n0  cpu"
  ARGS detect --root "${_hgx}" --family gpu)
cli_expect(cli_detect_family_list CODE 0
  STDOUT "^#  kind +name +memory +pci\n0  cpu +.*\n1  intel_npu +Intel NPU \\(Lunar Lake\\) +15\\.6 GiB \\(sysfs\\) +0000:00:0b\\.0\n\n"
  ARGS detect --root "${_npu}" --family npu,cpu)
cli_expect(cli_detect_family_list_memory_unknown CODE 0
  STDOUT "^#  kind +name +memory +pci\n0  cpu +.*\n1  intel_npu +Intel NPU \\(Lunar Lake\\) +unknown +0000:00:0b\\.0\n\n"
  ARGS detect --root "${_npu_no_proc}" --family npu,cpu)
# "asic" is accepted for ai_asic; sixteen Trainium devices, rows 1 to 16.
cli_expect(cli_detect_family_alias CODE 0
  STDOUT "\n1   aws_trainium  AWS Trainium .*\n16  aws_trainium  AWS Trainium "
  NOT_STDOUT "\n0 +cpu"
  ARGS detect --root "${_trn}" --family asic)
# Nothing of the family: the table's header, the host, exit code 1 and a message.
cli_expect(cli_detect_family_none_found CODE 1
  STDOUT "^#  kind +name +memory +pci\n\ncpu: "
  STDERR "no device of family tpu found"
  ARGS detect --root "${_hgx}" --family tpu)

# ---- --sort ---------------------------------------------------------------------------------
# Descending PCI address; the CPU has none and sorts last either way.
cli_expect(cli_detect_sort_pci_descending CODE 0
  STDOUT "^#  pci\n8  0000:db:00\\.0\n7  0000:cb:00\\.0\n6  0000:bb:00\\.0\n5  0000:9b:00\\.0\n4  0000:5d:00\\.0\n3  0000:4c:00\\.0\n2  0000:3b:00\\.0\n1  0000:19:00\\.0\n0  -\n\n"
  ARGS detect --root "${_hgx}" --sort -pci --columns row,pci)
# Unknown memory (the CPU's, on the MacBook whose sysctl does not give it) comes last
# ascending and descending.
cli_expect(cli_detect_sort_unknown_last CODE 0
  STDOUT "^#  memory\n1  16\\.0 GiB \\(tool\\)\n2  16\\.0 GiB \\(tool\\)\n0  unknown\n"
  ARGS detect --root "${_mac_no_memsize}" --sort=memory --columns=row,memory)
cli_expect(cli_detect_sort_unknown_last_descending CODE 0
  STDOUT "^#  memory\n1  16\\.0 GiB \\(tool\\)\n2  16\\.0 GiB \\(tool\\)\n0  unknown\n"
  ARGS detect --root "${_mac_no_memsize}" --sort=-memory --columns=row,memory)
# A Mac has no /proc: the host is sysctl's, with no warning about the files.
cli_expect(cli_detect_mac_host_from_sysctl CODE 0
  STDOUT "0  cpu +Apple M1 Pro +16\\.0 GiB \\(tool\\).*\ncpu: Apple M1 Pro \\(apple, aarch64\\): 1 socket\\(s\\), 10 core\\(s\\), 10 thread\\(s\\)\n.*memory: total 16\\.0 GiB \\(tool\\)"
  STDERR_EMPTY
  ARGS detect --root "${_mac}")
# Names compare ignoring case: "Intel…" < "llvmpipe…" < "NVIDIA…".
cli_expect(cli_detect_sort_name CODE 0
  STDOUT "^#  name\n0  13th Gen Intel\\(R\\) Core\\(TM\\) i7-1370P\n2  Intel Graphics \\[0xa7a0\\]\n3  llvmpipe \\(LLVM 15\\.0\\.6, 256 bits\\) \\[software\\]\n1  NVIDIA GeForce RTX 4090\n"
  ARGS detect --root "${_rtx}" --sort name --columns row,name)
# Two keys: NUMA node ascending, then row descending within a node.
cli_expect(cli_detect_sort_two_keys CODE 0
  STDOUT "^#  numa\n2  0\n1  0\n4  1\n3  1\n0  -\n"
  ARGS detect --root "${_mi300x}" --sort numa,-row --columns row,numa)

# ---- --columns ------------------------------------------------------------------------------
cli_expect(cli_detect_columns_order CODE 0
  STDOUT "^pci +name +numa\n- +Intel\\(R\\) Xeon\\(R\\) Platinum 8480\\+ +-\n0000:19:00\\.0 +NVIDIA H100 80GB HBM3 +0\n"
  ARGS detect --root "${_hgx}" --columns pci,name,numa)
cli_expect(cli_detect_columns_readings CODE 0
  STDOUT "\n1  30 C +71 W +0 % +3350 GB/s \\(catalogue\\)  catalogue +NVIDIA H100 SXM5 80GB  9\\.0 +yes\n"
  ARGS detect --root "${_hgx}" --columns row,temperature,power,utilization,bandwidth,bandwidth_origin,spec,arch,available)

# ---- the stacks of a multi-stack card ---------------------------------------------------------
# Level Zero's default (FLAT) makes each stack of a Max 1550 a device of 64 GiB: the table
# names the stack beside the card's PCI address, the TSV in a column of its own.
cli_expect(cli_detect_stacks_flat CODE 0
  STDOUT "\n1  intel_gpu +Intel Data Center GPU Max 1550 +64\\.0 GiB \\(sysfs\\) +0000:29:00\\.0 stack 0\n2  intel_gpu +Intel Data Center GPU Max 1550 +64\\.0 GiB \\(sysfs\\) +0000:29:00\\.0 stack 1\n3  [^\n]*0000:9a:00\\.0 stack 0\n4  [^\n]*0000:9a:00\\.0 stack 1\n\n"
  ARGS detect --root "${_max}")
cli_expect(cli_detect_stacks_tsv CODE 0
  STDOUT "^row\tindex\tpci\tstack\tmemory\n0\t0\t\t\t[0-9]+\n1\t1\t0000:29:00\\.0\t0\t68719476736\n2\t1\t0000:29:00\\.0\t1\t68719476736\n3\t2\t0000:9a:00\\.0\t0\t68719476736\n4\t2\t0000:9a:00\\.0\t1\t68719476736\n$"
  ARGS detect --root "${_max}" --tsv --columns row,index,pci,stack,memory)
cli_expect(cli_detect_stacks_composite CODE 0
  STDOUT "\n1  intel_gpu +Intel Data Center GPU Max 1550 +128\\.0 GiB \\(sysfs\\) +0000:29:00\\.0\n2  intel_gpu +Intel Data Center GPU Max 1550 +128\\.0 GiB \\(sysfs\\) +0000:9a:00\\.0\n\n"
  ARGS detect --root "${_max_composite}")

# ---- --tsv ----------------------------------------------------------------------------------
cli_expect(cli_detect_tsv_default CODE 0 STDERR_EMPTY
  STDOUT "^row\tindex\tkind\tfamily\tvendor\tname\tmemory\tmemory_origin\tbandwidth\tbandwidth_origin\tpci\tnuma\tdriver\tavailable\tsoftware\n0\t0\tcpu\tcpu\tintel\tIntel\\(R\\) Xeon\\(R\\) Platinum 8480\\+\t2164350439424\tsysfs\t\t\t\t\t\ttrue\tfalse\n1\t0\tcuda_gpu\tgpu\tnvidia\tNVIDIA H100 80GB HBM3\t85520809984\ttool\t3350\tcatalogue\t0000:19:00\\.0\t0\t535\\.161\\.08\ttrue\tfalse\n"
  ARGS detect --root "${_hgx}" --tsv)
# Parsed and compared cell by cell with expected.json, with --family, --sort and --json,
# on every fixture machine.
file(GLOB _all_machines LIST_DIRECTORIES true "${_machines}/handmade-*" "${_machines}/captured-*")
foreach(_m IN LISTS _all_machines)
  get_filename_component(_name "${_m}" NAME)
  add_test(NAME cli_detect_tsv_${_name}
           COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/cli/detect_tsv.py"
                   $<TARGET_FILE:ai_hwaccel_cli> "${PROJECT_SOURCE_DIR}" "${_m}")
endforeach()

# ---- --json with --family and --sort ---------------------------------------------------------
if(AI_HWACCEL_JSON_FOUND)
  cli_expect(cli_detect_json_family CODE 0
    STDOUT "\"kind\": \"cuda_gpu\""
    NOT_STDOUT "\"kind\": \"cpu\""
    ARGS detect --root "${_hgx}" --json --family gpu)
endif()

# ---- --timings, and its other spelling ------------------------------------------------------
cli_expect(cli_detect_timing_alias CODE 0
  STDOUT "\nprobe +state +elapsed +devices +warnings\nhost +ran +[0-9.]+ ms"
  ARGS detect --root "${_hgx}" --timing)

# ---- bad values: exit code 2, a message naming the value, nothing on stdout -------------------
set(_bad_cases
  "unknown_column|unknown column 'frob' \\(columns: row, index, kind, family, vendor, name, memory,|--columns|name,frob"
  "unknown_family|unknown family 'xpu' \\(families: cpu, gpu, npu, tpu, ai_asic\\)|--family|xpu"
  "unknown_sort_key|unknown sort key 'frob' \\(keys: row, index,|--sort|-frob"
  "sort_missing|--sort needs a value|--sort"
  "columns_missing|--columns needs a value|--columns"
  "family_missing|--family needs a value|--family"
  "sort_then_option|--sort needs a value|--sort|--json"
  "columns_empty|--columns needs at least one column|--columns|,"
  "columns_twice|column 'name' given twice|--columns|name,name"
  "sort_twice|sort key 'memory' given twice|--sort|memory,-memory"
  "colour_twice|option '--color' given twice|--color|never|--color=always"
  "columns_with_json|--columns applies to the table and --tsv, not --json|--columns|name|--json"
  "columns_with_summary|--columns applies to the table and --tsv, not --summary|--columns|name|--summary"
  "two_outputs|--json, --tsv and --summary are different outputs|--tsv|--summary"
  "timings_with_tsv|--timings cannot be combined with --tsv|--tsv|--timings"
  "option_twice|option '--sort' given twice|--sort|name|--sort|pci"
  "flag_with_value|--tsv takes no value|--tsv=yes"
  "positional|detect takes no arguments \\('gpu'\\)|gpu"
  "unknown_option|unknown option '--frobnicate' for detect|--frobnicate"
  "unknown_option_value|unknown option '--frobnicate' for detect|--frobnicate=1"
  "bad_colour|--color: 'sometimes' is not auto, always or never|--color=sometimes"
  "colour_missing|--color needs a value|--color"
  "only_empty|--only needs at least one backend|--only|,"
  "skip_empty|--skip needs at least one backend|--skip| , "
  "only_unknown|unknown backend 'bogus'|--only|cuda,bogus")
foreach(_case IN LISTS _bad_cases)
  string(REPLACE "|" ";" _parts "${_case}")
  list(POP_FRONT _parts _name _message)
  cli_expect(cli_detect_bad_${_name} CODE 2 STDERR "ai-hwaccel: ${_message}" NOT_STDOUT "."
    ARGS detect --root "${_hgx}" ${_parts})
endforeach()

# ---- help -----------------------------------------------------------------------------------
# Each command's help: `COMMAND --help`, `COMMAND -h`, `help COMMAND` and `--help COMMAND`
# print it on stdout with exit code 0, and not the list of commands.
foreach(_cmd IN ITEMS detect parse catalogue models backends export estimate plan training cost gather watch version help)
  foreach(_form IN ITEMS "${_cmd};--help" "${_cmd};-h" "help;${_cmd}" "--help;${_cmd}")
    string(REPLACE ";" "_" _id "${_form}")
    string(REPLACE "--" "long" _id "${_id}")
    string(REPLACE "-" "short" _id "${_id}")
    cli_expect(cli_help_${_id} CODE 0 STDERR_EMPTY
      STDOUT "^usage: ai-hwaccel ${_cmd}"
      NOT_STDOUT "\ncommands:\n"
      ARGS ${_form})
  endforeach()
endforeach()
cli_expect(cli_help_catalog_alias CODE 0 STDOUT "^usage: ai-hwaccel catalogue" ARGS catalog --help)
# A help option after other options still belongs to the command: the planning command
# prints its help rather than running (estimate would need --device).
cli_expect(cli_help_after_options CODE 0 STDOUT "^usage: ai-hwaccel estimate" STDERR_EMPTY
  ARGS estimate --model llama-3.1-8b --help)
cli_expect(cli_help_implied_detect CODE 0 STDOUT "^usage: ai-hwaccel detect" ARGS --json --help)
# detect's help lists every column, from the table the options parse.
cli_expect(cli_help_detect_columns CODE 0
  STDOUT "\n  row  +place in detection order.*\n  memory +device memory.*\n  bandwidth_origin +.*\n  unified +shares the host's memory"
  ARGS help detect)
# The list of commands, each with a line.
cli_expect(cli_help_commands CODE 0 STDERR_EMPTY
  STDOUT "^usage: ai-hwaccel <command> \\[options\\]\n.*\ncommands:\n  detect +[^\n]+\n  parse +.*\n  estimate +.*\n  cost +.*\n  help +.*--color WHEN.*NO_COLOR.*exit codes: 0 "
  ARGS --help)
cli_expect(cli_help_unknown_command CODE 2 STDERR "ai-hwaccel: unknown command 'frob'" NOT_STDOUT "."
  ARGS help frob)
cli_expect(cli_help_two_commands CODE 2 STDERR "help takes one command" ARGS help detect plan)

# ---- colour, on a pseudo-terminal ------------------------------------------------------------
if(UNIX)
  add_test(NAME cli_detect_colour
           COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/cli/colour.py"
                   $<TARGET_FILE:ai_hwaccel_cli> "${_rtx}" "${_machines}/handmade-inf2-host")
endif()

# ---- commands and help as users mistype them --------------------------------------------------
cli_expect(cli_command_typo CODE 2 STDERR "unknown command 'detcet' \\(did you mean 'detect'\\?\\)" NOT_STDOUT "."
  ARGS detcet --root "${_hgx}")
cli_expect(cli_command_case CODE 2 STDERR "unknown command 'Plan' \\(did you mean 'plan'\\?\\)" ARGS Plan)
# --help first with only options after it is the list of commands; with two commands, the
# same usage error as `help detect plan`.
cli_expect(cli_help_first_then_option CODE 0 STDERR_EMPTY STDOUT "^usage: ai-hwaccel <command>.*\ncommands:\n"
  ARGS --help --json)
cli_expect(cli_help_first_two_commands CODE 2 STDERR "help takes one command" NOT_STDOUT "." ARGS --help detect plan)
# backends: every row's tools start in the same column, whatever the length of the names.
add_test(NAME cli_backends_aligned
         COMMAND "${Python3_EXECUTABLE}" -c "import subprocess, sys
rows = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True).stdout.splitlines()
first = {r.split()[0]: r for r in rows}
starts = {first['cuda'].index('nvidia-smi'), first['apple'].index('system_profiler'), first['neuron'].index('neuron-ls')}
sys.exit(0 if len(starts) == 1 else 'tools start at columns %s:\\n%s' % (sorted(starts), '\\n'.join(rows)))"
                 $<TARGET_FILE:ai_hwaccel_cli> backends)

# ---- parse: options, and why a file cannot be read ------------------------------------------
cli_expect(cli_parse_format_equals CODE 0 STDOUT "^format: proc-cpuinfo "
  ARGS parse "${_hgx}/proc/cpuinfo" --format=proc-cpuinfo)
cli_expect(cli_parse_option_twice CODE 2 STDERR "option '--json' given twice" ARGS parse "${_hgx}/proc/cpuinfo" --json --json)
cli_expect(cli_parse_missing_file CODE 1 STDERR "cannot open '/nonexistent/ai-hwaccel': No such file or directory"
  ARGS parse /nonexistent/ai-hwaccel)
cli_expect(cli_parse_folder CODE 1 STDERR "cannot read '.*': Is a directory" ARGS parse "${_hgx}")
# A format named that reads nothing from the file: its output, then exit 1 (it was 0).
cli_expect(cli_parse_format_reads_nothing CODE 1 STDOUT "^format: rocm-smi-json "
  STDERR "not rocm-smi output.*nothing in '.*/proc/cpuinfo' read as rocm-smi-json"
  ARGS parse "${_hgx}/proc/cpuinfo" --format rocm-smi-json)
if(EXISTS /dev/null)
  cli_expect(cli_parse_empty CODE 1 STDERR "'/dev/null' is empty" ARGS parse /dev/null)
endif()

# ---- export: options as every command reads them, and values that cannot be written ----------
cli_expect(cli_export_root_equals CODE 0 STDOUT "\nai_hwaccel_device_info\\{kind=\"cuda_gpu\"" ARGS export prometheus --root=${_hgx})
cli_expect(cli_export_option_twice CODE 2 STDERR "option '--root' given twice" NOT_STDOUT "."
  ARGS export prometheus --root "${_hgx}" --root "${_hgx}")
cli_expect(cli_export_output_empty CODE 2 STDERR "--output needs a value" NOT_STDOUT "."
  ARGS export prometheus --root "${_hgx}" --output=)
cli_expect(cli_export_output_missing CODE 2 STDERR "--output needs a value" ARGS export prometheus --output --root "${_hgx}")
# The exporter keeps one value per label name: a second is refused, not silently dropped.
cli_expect(cli_export_label_twice CODE 2 STDERR "--label: 'node' given twice" NOT_STDOUT "."
  ARGS export prometheus --root "${_hgx}" --label node=a --label node=b)
cli_expect(cli_export_labels CODE 0 STDOUT "ai_hwaccel_build_info\\{version=\"[^\"]+\",node=\"a\",rack=\"b\"\\} 1"
  ARGS export prometheus --root "${_hgx}" --label node=a --label rack=b)
# An expiry past the year 9999 cannot be written as an RFC 3339 time (it wrapped round
# to a year before 0).
cli_expect(cli_export_expiry_huge CODE 2 STDERR "--expiry-seconds: '9223372036854775807' is not" NOT_STDOUT "."
  ARGS export nfd --root "${_hgx}" --expiry-seconds 9223372036854775807)
# NFD denies kubernetes.io and its sub-namespaces (feature.node.kubernetes.io excepted):
# such a prefix would have every label dropped without a word.
cli_expect(cli_export_nfd_prefix_denied CODE 2 STDERR "--prefix 'node.kubernetes.io': NFD denies kubernetes.io" NOT_STDOUT "."
  ARGS export nfd --root "${_hgx}" --prefix node.kubernetes.io)
cli_expect(cli_export_nfd_prefix_feature CODE 0 STDOUT "\nfeature\\.node\\.kubernetes\\.io/cuda_gpu\\.count=8\n"
  ARGS export nfd --root "${_hgx}" --prefix feature.node.kubernetes.io)
cli_expect(cli_export_expiry CODE 0 STDOUT "# \\+expiry-time=[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T"
  ARGS export nfd --root "${_hgx}" --expiry-seconds=3600)
# The list of commands names every exit code docs/cli.md does, watch's 3 included.
cli_expect(cli_help_exit_codes CODE 0 STDOUT "exit codes: 0 done.* 1 nothing found.* 2 a usage error.* 3 watch: an --alert fired"
  ARGS --help)
# A file that cannot be written: exit 1, and the message names the file asked for (not
# only the temporary file beside it).
cli_expect(cli_export_output_unwritable CODE 1 STDERR "cannot write '/nonexistent/ai-hwaccel/metrics\\.prom': " NOT_STDOUT "."
  ARGS export prometheus --root "${_hgx}" --output /nonexistent/ai-hwaccel/metrics.prom)
# The catalogue's 0 means "no figure": listed as unknown, never as 0 GB/s or 0.0 TFLOPS.
cli_expect(cli_catalogue_unknown_figures CODE 0 STDOUT "GB/s" NOT_STDOUT " 0 GB/s| 0\\.0 TFLOPS" ARGS catalogue)
# A header row names the columns, once, above the first device that matches.
cli_expect(cli_catalogue_header CODE 0
  STDOUT "^name +kind +memory +bandwidth +link +peak\nNVIDIA H100 SXM5 80GB +cuda_gpu +80\\.0 GiB +3350 GB/s +nvlink 900 GB/s x8 +[0-9.]+ TFLOPS bf16/fp16\n$"
  ARGS catalogue "h100 sxm5")
