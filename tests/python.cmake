# The Python bindings (python/), tested with Python's own unittest runner against the
# module in the build tree. Included by tests/CMakeLists.txt; nothing is added unless the
# module is built (-DAI_HWACCEL_BUILD_PYTHON=ON and pybind11 found; python/CMakeLists.txt
# says why when it is not).
if(NOT TARGET ai_hwaccel_python)
  if(AI_HWACCEL_BUILD_PYTHON)
    message(STATUS "ai_hwaccel: the Python module is not built (see above); its tests are skipped")
  else()
    message(STATUS "ai_hwaccel: Python bindings off (-DAI_HWACCEL_BUILD_PYTHON=ON builds them); their tests are skipped")
  endif()
  return()
endif()

# The interpreter the module was built for (python/ found it first; this reuses it).
add_test(NAME python_bindings
         COMMAND "${Python3_EXECUTABLE}" -m unittest discover
                 -s "${PROJECT_SOURCE_DIR}/python/tests" -t "${PROJECT_SOURCE_DIR}/python/tests" -v)
set_tests_properties(python_bindings PROPERTIES
  ENVIRONMENT "PYTHONPATH=${AI_HWACCEL_PYTHON_PATH};PYTHONDONTWRITEBYTECODE=1;AI_HWACCEL_MACHINES_DIR=${CMAKE_CURRENT_SOURCE_DIR}/machines;AI_HWACCEL_CLI=$<TARGET_FILE:ai_hwaccel_cli>"
  # unittest before Python 3.12 exits 0 when it finds no test at all.
  FAIL_REGULAR_EXPRESSION "Ran 0 tests")
