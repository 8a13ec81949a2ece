# Builds and runs one consumer project the way a user would.
#   cmake -DCONSUMER=<find_package|single_header|add_subdirectory> -DSOURCE_DIR=<repo>
#         -DWORK_DIR=<scratch> -DCMAKE_CXX_COMPILER=<c++> [-DGENERATOR=…] -P run_consumer.cmake
cmake_minimum_required(VERSION 3.21)
set(here "${CMAKE_CURRENT_LIST_DIR}")
set(work "${WORK_DIR}/${CONSUMER}")
file(REMOVE_RECURSE "${work}")
set(gen_args "")
if(GENERATOR)
  set(gen_args -G "${GENERATOR}")
endif()

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

set(consumer_args "")
if(CONSUMER STREQUAL "find_package")
  # Install the library into a private prefix, as a package manager would.
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${work}/lib-build" ${gen_args}
      -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DAI_HWACCEL_BUILD_TESTS=OFF
      -DAI_HWACCEL_BUILD_EXAMPLES=OFF -DAI_HWACCEL_INSTALL=ON -DCMAKE_INSTALL_PREFIX=${work}/prefix)
  run("${CMAKE_COMMAND}" --build "${work}/lib-build" -j 2)
  run("${CMAKE_COMMAND}" --install "${work}/lib-build")
  foreach(f include/ai_hwaccel/core.hpp share/cmake/ai_hwaccel/ai_hwaccelConfig.cmake
            share/cmake/ai_hwaccel/ai_hwaccelConfigVersion.cmake share/pkgconfig/ai_hwaccel.pc bin/ai-hwaccel)
    if(NOT EXISTS "${work}/prefix/${f}")
      message(FATAL_ERROR "install did not produce ${f}")
    endif()
  endforeach()
  # pkg-config sees the same package.
  find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PKG_CONFIG_PATH=${work}/prefix/share/pkgconfig"
                          "${PKG_CONFIG}" --cflags ai_hwaccel
                  RESULT_VARIABLE rc OUTPUT_VARIABLE cflags ERROR_VARIABLE err)
  # The .pc file names its prefix relative to itself (${pcfiledir}/../..).
  set(included "")
  if(cflags MATCHES "-I([^ \n]+)")
    file(REAL_PATH "${CMAKE_MATCH_1}" included)
  endif()
  file(REAL_PATH "${work}/prefix/include" expected)
  if(NOT rc EQUAL 0 OR NOT included STREQUAL expected OR NOT cflags MATCHES "-std=c\\+\\+20")
    message(FATAL_ERROR "pkg-config --cflags ai_hwaccel: '${cflags}' (${rc}) ${err}")
  endif()
  message(STATUS "pkg-config --cflags ai_hwaccel: ${cflags}")
  set(consumer_args -DCMAKE_PREFIX_PATH=${work}/prefix)
elseif(CONSUMER STREQUAL "single_header")
  set(consumer_args -DSINGLE_INCLUDE_DIR=${SOURCE_DIR}/single_include)
elseif(CONSUMER STREQUAL "add_subdirectory")
  set(consumer_args -DAI_HWACCEL_SOURCE_DIR=${SOURCE_DIR})
else()
  message(FATAL_ERROR "unknown consumer '${CONSUMER}'")
endif()

run("${CMAKE_COMMAND}" -S "${here}/${CONSUMER}" -B "${work}/build" ${gen_args}
    -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} ${consumer_args})
run("${CMAKE_COMMAND}" --build "${work}/build" -j 2)
run("${work}/build/consumer")
