# One way a user takes the library, built and run end to end:
#   cmake -DMODE=<mode> -DSOURCE_DIR=… -DWORK_DIR=… -DCMAKE_CXX_COMPILER=… -P consumer.cmake
# Modes:
#   fetchcontent_archive     FetchContent from a release-style archive (URL file://, hashed)
#   fetchcontent_source_dir  FetchContent redirected to the checkout (no network)
#   wrong_version            find_package refuses 9.0 and the next minor version, accepts
#                            the installed one (the positive control)
#   pkg_config               pkg-config --cflags --libs compiles and links the program,
#                            from an install moved away from its configured prefix
#   conan_test_package       conan/test_package built against a CMake-installed prefix
#   headers_only             the README's headers-alone install (CLI and C library off, the
#                            tests left on), installed unbuilt: no program, a usable package
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
pk_read_project(_backends _version)
set(work "${WORK_DIR}/${MODE}")
file(REMOVE_RECURSE "${work}")

if(MODE STREQUAL "fetchcontent_archive")
  # A release archive holds what the library's own configure needs as a subproject.
  set(stage "${work}/stage/ai-hwaccel-${_version}")
  file(MAKE_DIRECTORY "${stage}")
  file(COPY "${SOURCE_DIR}/CMakeLists.txt" "${SOURCE_DIR}/cmake" "${SOURCE_DIR}/include"
       DESTINATION "${stage}")
  foreach(f LICENSE README.md)
    if(EXISTS "${SOURCE_DIR}/${f}")
      file(COPY "${SOURCE_DIR}/${f}" DESTINATION "${stage}")
    endif()
  endforeach()
  set(archive "${work}/ai-hwaccel-${_version}.tar.gz")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E tar czf "${archive}" "ai-hwaccel-${_version}"
                  WORKING_DIRECTORY "${work}/stage" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "could not pack ${archive}")
  endif()
  file(SHA256 "${archive}" sha)
  pk_build_consumer("${PK_HERE}/fetchcontent" "${work}/build"
                    -DAI_HWACCEL_ARCHIVE=${archive} -DAI_HWACCEL_ARCHIVE_SHA256=${sha}
                    -DFETCHCONTENT_BASE_DIR=${work}/deps)
  pk_expect_backends("${work}/build/consumer" ROCM NEURON)

elseif(MODE STREQUAL "fetchcontent_source_dir")
  pk_build_consumer("${PK_HERE}/fetchcontent" "${work}/build"
                    -DAI_HWACCEL_WANTED_VERSION=${_version}
                    -DFETCHCONTENT_SOURCE_DIR_AI_HWACCEL=${SOURCE_DIR}
                    -DFETCHCONTENT_FULLY_DISCONNECTED=ON -DFETCHCONTENT_BASE_DIR=${work}/deps)
  pk_expect_backends("${work}/build/consumer" ROCM NEURON)

elseif(MODE STREQUAL "wrong_version")
  pk_install_library("${work}/prefix" "${work}/lib-build")
  string(REPLACE "." ";" parts "${_version}")
  list(GET parts 0 major)
  list(GET parts 1 minor)
  math(EXPR next_minor "${minor} + 1")
  math(EXPR other_major "${major} + 9")
  # 9.0 (brief's example) stays a wrong major for every 0.x and 1.x release.
  set(requests "9.0" "${other_major}.0" "${major}.${next_minor}")
  list(REMOVE_DUPLICATES requests)
  foreach(request IN LISTS requests)
    if(request VERSION_EQUAL "${major}.${minor}")
      continue()
    endif()
    execute_process(
      COMMAND "${CMAKE_COMMAND}" -S "${PK_HERE}/find_package" -B "${work}/refused-${request}"
              ${PK_GEN_ARGS} -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DPK_PROGRAM=${PK_PROGRAM}
              -DCMAKE_PREFIX_PATH=${work}/prefix -DREQUEST_VERSION=${request}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(REPLACE "." "\\." request_re "${request}")
    string(REPLACE "." "\\." version_re "${_version}")
    if(rc EQUAL 0)
      message(FATAL_ERROR "find_package(ai_hwaccel ${request}) accepted version ${_version}\n${out}")
    endif()
    if(NOT err MATCHES "compatible with requested version \"${request_re}\""
       OR NOT err MATCHES "ai_hwaccelConfig\\.cmake, version: ${version_re}")
      message(FATAL_ERROR "find_package(ai_hwaccel ${request}) failed, but not by refusing "
                          "the installed version ${_version}:\n${err}")
    endif()
    message(STATUS "refused as it should be: find_package(ai_hwaccel ${request})")
  endforeach()
  # The control: the same project asking for the installed major.minor builds and runs.
  pk_build_consumer("${PK_HERE}/find_package" "${work}/accepted"
                    -DCMAKE_PREFIX_PATH=${work}/prefix -DREQUEST_VERSION=${major}.${minor})
  pk_expect_backends("${work}/accepted/consumer" ${_backends})

elseif(MODE STREQUAL "pkg_config")
  # Configured for one prefix, installed with `--install --prefix` to another, then moved:
  # the .pc file must follow the files, not the prefix the build was configured with.
  pk_run(o "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${work}/lib-build" ${PK_GEN_ARGS}
         -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DCMAKE_INSTALL_PREFIX=${work}/configured
         -DAI_HWACCEL_INSTALL=ON -DAI_HWACCEL_BUILD_TESTS=OFF -DAI_HWACCEL_BUILD_EXAMPLES=OFF
         -DAI_HWACCEL_BUILD_BENCHMARKS=OFF -DAI_HWACCEL_BUILD_CLI=OFF -DAI_HWACCEL_BUILD_CAPI=OFF
         -DAI_HWACCEL_BUILD_PYTHON=OFF -DAI_HWACCEL_BACKENDS_NONE=ON -DAI_HWACCEL_BACKEND_GAUDI=ON)
  pk_run(o "${CMAKE_COMMAND}" --install "${work}/lib-build" --prefix "${work}/installed")
  file(RENAME "${work}/installed" "${work}/moved")
  find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
  pk_run(flags "${CMAKE_COMMAND}" -E env "PKG_CONFIG_PATH=${work}/moved/share/pkgconfig"
         "${PKG_CONFIG}" --cflags --libs ai_hwaccel)
  string(STRIP "${flags}" flags)
  message(STATUS "pkg-config --cflags --libs ai_hwaccel: ${flags}")
  if(NOT flags MATCHES "-I([^ ]+)")
    message(FATAL_ERROR "pkg-config gives no include folder: ${flags}")
  endif()
  file(REAL_PATH "${CMAKE_MATCH_1}" included)
  file(REAL_PATH "${work}/moved/include" expected)
  if(NOT included STREQUAL expected)
    message(FATAL_ERROR "pkg-config points at ${included}, not at the installed headers ${expected}")
  endif()
  if(EXISTS "${work}/configured")
    message(FATAL_ERROR "installing with --prefix wrote to the configured prefix")
  endif()
  separate_arguments(flag_list UNIX_COMMAND "${flags}")
  pk_run(o "${CMAKE_CXX_COMPILER}" "${PK_PROGRAM}" -o "${work}/consumer" ${flag_list})
  pk_expect_backends("${work}/consumer" GAUDI)

elseif(MODE STREQUAL "headers_only")
  # The tests build the CLI for themselves; an install asked for without it has none, and
  # needs nothing built.
  pk_run(o "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${work}/lib-build" ${PK_GEN_ARGS}
         -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER} -DAI_HWACCEL_INSTALL=ON
         -DAI_HWACCEL_BUILD_CLI=OFF -DAI_HWACCEL_BUILD_CAPI=OFF -DAI_HWACCEL_BUILD_PYTHON=OFF
         -DAI_HWACCEL_BUILD_EXAMPLES=OFF -DAI_HWACCEL_BUILD_BENCHMARKS=OFF)
  pk_run(o "${CMAKE_COMMAND}" --install "${work}/lib-build" --prefix "${work}/prefix")
  if(EXISTS "${work}/prefix/bin")
    message(FATAL_ERROR "a headers-alone install wrote ${work}/prefix/bin")
  endif()
  pk_build_consumer("${PK_HERE}/find_package" "${work}/build"
                    -DCMAKE_PREFIX_PATH=${work}/prefix -DREQUEST_VERSION=${_version})
  pk_expect_backends("${work}/build/consumer" ${_backends})

elseif(MODE STREQUAL "conan_test_package")
  # The recipe's own test project, against the tree a CMake install produces.
  pk_install_library("${work}/prefix" "${work}/lib-build"
                     -DAI_HWACCEL_BACKENDS_NONE=ON -DAI_HWACCEL_BACKEND_CUDA=ON
                     -DAI_HWACCEL_BACKEND_VULKAN=ON)
  pk_build_consumer("${SOURCE_DIR}/conan/test_package" "${work}/build"
                    -DCMAKE_PREFIX_PATH=${work}/prefix)
  pk_expect_backends("${work}/build/test_package" CUDA VULKAN)

else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
