# Helpers shared by the package test scripts (run with cmake -P). Each script is given
#   -DSOURCE_DIR=<checkout> -DWORK_DIR=<scratch folder> -DCMAKE_CXX_COMPILER=<c++>
#   [-DGENERATOR=<cmake generator>]
cmake_minimum_required(VERSION 3.21)
foreach(_v SOURCE_DIR WORK_DIR CMAKE_CXX_COMPILER)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE}: -D${_v}=… is required")
  endif()
endforeach()
set(PK_HERE "${CMAKE_CURRENT_LIST_DIR}")
# The smoke program every package consumer builds (the Conan test_package's own).
set(PK_PROGRAM "${SOURCE_DIR}/conan/test_package/test_package.cpp")
set(PK_GEN_ARGS "")
if(GENERATOR)
  set(PK_GEN_ARGS -G "${GENERATOR}")
endif()

# pk_run(<out-var> <command>...): runs the command, stops the test when it fails.
function(pk_run out)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${o}\n${e}")
  endif()
  set(${out} "${o}" PARENT_SCOPE)
endfunction()

# The backend list and the version, read from the sources the way CMake reads them.
function(pk_read_project backends_var version_var)
  file(READ "${SOURCE_DIR}/CMakeLists.txt" top)
  if(NOT top MATCHES "set\\(AI_HWACCEL_BACKENDS([^)]*)\\)")
    message(FATAL_ERROR "no set(AI_HWACCEL_BACKENDS …) in CMakeLists.txt")
  endif()
  string(STRIP "${CMAKE_MATCH_1}" names)
  string(REGEX REPLACE "[ \t\r\n]+" ";" names "${names}")
  file(STRINGS "${SOURCE_DIR}/include/ai_hwaccel/config.hpp" line
       REGEX "^#define AI_HWACCEL_VERSION_STRING \"[0-9.]+\"")
  string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" version "${line}")
  set(${backends_var} "${names}" PARENT_SCOPE)
  set(${version_var} "${version}" PARENT_SCOPE)
endfunction()

# pk_install_library(<prefix> <build dir> [-D… options]): configures the library with
# everything but the package itself switched off, and installs it to <prefix>.
function(pk_install_library prefix build)
  pk_run(o "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${build}" ${PK_GEN_ARGS}
         -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DCMAKE_INSTALL_PREFIX=${prefix}
         -DAI_HWACCEL_INSTALL=ON -DAI_HWACCEL_BUILD_TESTS=OFF -DAI_HWACCEL_BUILD_EXAMPLES=OFF
         -DAI_HWACCEL_BUILD_BENCHMARKS=OFF -DAI_HWACCEL_BUILD_CLI=OFF
         -DAI_HWACCEL_BUILD_CAPI=OFF -DAI_HWACCEL_BUILD_PYTHON=OFF ${ARGN})
  pk_run(o "${CMAKE_COMMAND}" --install "${build}")
endfunction()

# pk_build_consumer(<project dir> <build dir> [-D… options]): configure and build.
function(pk_build_consumer project build)
  pk_run(o "${CMAKE_COMMAND}" -S "${project}" -B "${build}" ${PK_GEN_ARGS}
         -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DPK_PROGRAM=${PK_PROGRAM} ${ARGN})
  pk_run(o "${CMAKE_COMMAND}" --build "${build}")
endfunction()

# pk_expect_backends(<program> <BACKEND names…>): runs the smoke program and checks it
# reports the project's version and exactly these backends (in table order, any case).
function(pk_expect_backends program)
  pk_read_project(all version)
  set(names "")
  set(mask 0)
  set(bit 0)
  foreach(b IN LISTS all)
    string(TOUPPER "${ARGN}" wanted)
    if(b IN_LIST wanted)
      string(TOLOWER "${b}" lower)
      string(APPEND names " ${lower}")
      math(EXPR mask "${mask} | (1 << ${bit})" OUTPUT_FORMAT HEXADECIMAL)
    endif()
    math(EXPR bit "${bit} + 1")
  endforeach()
  string(TOLOWER "${mask}" mask)
  if(mask STREQUAL "0")
    set(mask "0") # printf("%#x", 0) prints no prefix
  endif()
  set(expected "ai_hwaccel ${version} backends:${names} mask=${mask}\n")
  pk_run(got "${program}")
  if(NOT got STREQUAL expected)
    message(FATAL_ERROR "${program} printed\n  ${got}expected\n  ${expected}")
  endif()
  message(STATUS "ok: ${got}")
endfunction()
