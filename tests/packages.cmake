# Packaging: the vcpkg port and the Conan recipe replayed without their clients, the ways
# a user consumes the library that tests/consumers does not cover, and a lint that the
# version and the backend list agree everywhere they are written. See docs/packages.md.
# Included by tests/CMakeLists.txt; every build goes under this folder's binary dir.
set(_pk_dir "${CMAKE_CURRENT_SOURCE_DIR}/packages")
set(_pk_work "${CMAKE_CURRENT_BINARY_DIR}/packages")
set(_pk_args
  -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
  -DWORK_DIR=${_pk_work}
  -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
  -DGENERATOR=${CMAKE_GENERATOR})

# vcpkg: the port's portfile.cmake with a feature set, installed, relocated and consumed.
foreach(_pk_request IN ITEMS "core,cuda,tpu" "core,gaudi,json" "defaults")
  string(REPLACE "," "_" _pk_name "${_pk_request}")
  if(_pk_request STREQUAL "defaults")
    set(_pk_request "")
  endif()
  add_test(NAME packages_vcpkg_${_pk_name}
           COMMAND "${CMAKE_COMMAND}" ${_pk_args} "-DREQUEST=${_pk_request}"
                   -P "${_pk_dir}/vcpkg_replay.cmake")
endforeach()

# Conan: the recipe's methods and its test_package, through a stand-in for the conan module.
add_test(NAME packages_conan_defaults
         COMMAND "${Python3_EXECUTABLE}" "${_pk_dir}/conan_replay.py" --source-dir "${PROJECT_SOURCE_DIR}"
                 --work-dir "${_pk_work}/conan/defaults" --cxx "${CMAKE_CXX_COMPILER}"
                 --cmake "${CMAKE_COMMAND}" --generator "${CMAKE_GENERATOR}")
add_test(NAME packages_conan_tpu_gaudi_without_json
         COMMAND "${Python3_EXECUTABLE}" "${_pk_dir}/conan_replay.py" --source-dir "${PROJECT_SOURCE_DIR}"
                 --work-dir "${_pk_work}/conan/tpu_gaudi" --cxx "${CMAKE_CXX_COMPILER}"
                 --cmake "${CMAKE_COMMAND}" --generator "${CMAKE_GENERATOR}"
                 --only tpu,gaudi --without-json)

# Consumers beyond tests/consumers: FetchContent twice, a refused version, pkg-config, and
# the Conan test_package against a plain CMake install.
foreach(_pk_mode IN ITEMS fetchcontent_archive fetchcontent_source_dir wrong_version pkg_config
                          conan_test_package headers_only)
  add_test(NAME packages_consumer_${_pk_mode}
           COMMAND "${CMAKE_COMMAND}" ${_pk_args} -DMODE=${_pk_mode} -P "${_pk_dir}/consumer.cmake")
endforeach()

# Lint: version and backends agree across config.hpp, CMake, the port and the recipe;
# and the lint itself notices a change to any one of them.
add_test(NAME packages_versions_and_backends_agree
         COMMAND "${Python3_EXECUTABLE}" "${_pk_dir}/check_packages.py" --root "${PROJECT_SOURCE_DIR}"
                 --cmake-version "${PROJECT_VERSION}")
add_test(NAME packages_lint_catches_mismatches
         COMMAND "${Python3_EXECUTABLE}" "${_pk_dir}/check_packages.py" --root "${PROJECT_SOURCE_DIR}"
                 --self-test)

set_tests_properties(
  packages_vcpkg_core_cuda_tpu packages_vcpkg_core_gaudi_json packages_vcpkg_defaults
  packages_conan_defaults packages_conan_tpu_gaudi_without_json
  packages_consumer_fetchcontent_archive packages_consumer_fetchcontent_source_dir
  packages_consumer_wrong_version packages_consumer_pkg_config packages_consumer_conan_test_package
  packages_consumer_headers_only PROPERTIES LABELS packages TIMEOUT 300)
set_tests_properties(packages_versions_and_backends_agree packages_lint_catches_mismatches
  PROPERTIES LABELS packages)
