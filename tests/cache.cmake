# The cache room (include/ai_hwaccel/cache/) under ThreadSanitizer.
# Included by tests/CMakeLists.txt, in its scope (AI_HWACCEL_WARNINGS, doctest::doctest).
# The cache tests also run, unsanitized, in unit_tests like every other unit test file;
# here they are built once more, with their own doctest main, as `cache_tsan`, and run:
# TTL cache, disk cache (threads and forked processes writing one file), lazy registry and
# asynchronous detection must be free of data races.

set(_cache_tsan_sources
  "${CMAKE_CURRENT_SOURCE_DIR}/unit/cache_ttl.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit/cache_disk.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit/cache_lazy.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit/cache_async.cpp")

# Can this toolchain build and link a ThreadSanitizer program? (Not every platform ships
# libtsan; a skipped test says so rather than a broken build.)
include(CheckCXXSourceCompiles)
include(CMakePushCheckState)
cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_FLAGS -fsanitize=thread)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=thread)
check_cxx_source_compiles("#include <thread>\nint main() { std::thread t([] {}); t.join(); }"
                          AI_HWACCEL_HAVE_TSAN)
cmake_pop_check_state()

if(AI_HWACCEL_HAVE_TSAN AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(cache_tsan ${_cache_tsan_sources} "${CMAKE_CURRENT_SOURCE_DIR}/doctest_main.cpp")
  target_link_libraries(cache_tsan PRIVATE ai_hwaccel::ai_hwaccel doctest::doctest)
  target_compile_features(cache_tsan PRIVATE cxx_std_20)
  target_compile_options(cache_tsan PRIVATE ${AI_HWACCEL_WARNINGS} -fsanitize=thread -fno-omit-frame-pointer -g -O1)
  target_link_options(cache_tsan PRIVATE -fsanitize=thread)
  target_compile_definitions(cache_tsan PRIVATE
    AI_HWACCEL_CHECK_TABLES=1
    "AI_HWACCEL_FIXTURES_DIR=\"${AI_HWACCEL_FIXTURES_DIR}\""
    "AI_HWACCEL_MACHINES_DIR=\"${CMAKE_CURRENT_SOURCE_DIR}/machines\"")
  # TSan maps its shadow memory at fixed addresses; with the high mmap randomisation of
  # recent kernels that can fail ("unexpected memory mapping"), so the test runs with
  # address randomisation off when setarch is there to do it.
  find_program(AI_HWACCEL_SETARCH setarch)
  if(AI_HWACCEL_SETARCH)
    add_test(NAME cache_tsan COMMAND "${AI_HWACCEL_SETARCH}" "${CMAKE_SYSTEM_PROCESSOR}" -R $<TARGET_FILE:cache_tsan>)
  else()
    add_test(NAME cache_tsan COMMAND cache_tsan)
  endif()
  # Any report fails the test (exit code 66), not only a crash.
  set_tests_properties(cache_tsan PROPERTIES
    ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1"
    FAIL_REGULAR_EXPRESSION "WARNING: ThreadSanitizer")
else()
  message(STATUS "ai_hwaccel: this toolchain cannot build ThreadSanitizer programs; cache_tsan is skipped")
endif()
