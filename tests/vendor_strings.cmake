# Checks which vendor tool names, folders and variables binaries contain, as `strings`
# would find them. -DBINARIES=<file;file…> -DEXPECT=absent|present
set(_names nvidia-smi libnvidia-ml amd-smi rocm-smi rocminfo xpu-smi system_profiler vulkaninfo
           tpu-info hl-smi neuron-ls qaic-util gc-info dxgi.dll CUDA_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES
           HIP_VISIBLE_DEVICES HABANA_VISIBLE_DEVICES NEURON_RT_VISIBLE_CORES TPU_VISIBLE_CHIPS
           ZE_AFFINITY_MASK /opt/rocm /opt/aws/neuron /usr/local/nvidia /usr/local/cuda /opt/habanalabs
           /opt/qti-aic /proc/driver/nvidia)
foreach(_binary IN LISTS BINARIES)
  if(NOT EXISTS "${_binary}")
    message(FATAL_ERROR "no such binary: ${_binary}")
  endif()
  file(STRINGS "${_binary}" _strings)
  set(_found)
  set(_missing)
  foreach(_n IN LISTS _names)
    string(FIND "${_strings}" "${_n}" _at)
    if(_at EQUAL -1)
      list(APPEND _missing ${_n})
    else()
      list(APPEND _found ${_n})
    endif()
  endforeach()
  if(EXPECT STREQUAL "absent" AND _found)
    message(FATAL_ERROR "${_binary} contains vendor strings it should not: ${_found}")
  elseif(EXPECT STREQUAL "present" AND _missing)
    message(FATAL_ERROR "${_binary} lacks vendor strings (the check would prove nothing): ${_missing}")
  endif()
  list(LENGTH _names _n)
  message(STATUS "${_binary}: ${_n} vendor strings ${EXPECT}, as expected")
endforeach()
