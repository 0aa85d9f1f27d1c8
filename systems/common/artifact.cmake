# The build settings every native system shares, and the common library (systems/common): each
# system's CMakeLists.txt includes this file right after project().
#
#   C++20 without extensions, Release unless CMAKE_BUILD_TYPE says otherwise, -Wall -Wextra -Werror;
#   ARTIFACT_SANITIZE=address,undefined (or thread, ...) builds everything with those sanitizers;
#   artifact_common: the common library, an OBJECT library: a system's static library that links
#     it holds its objects, so that the labs link students' plug-ins against that one library;
#   artifact_device_library(): libartifact_device.so, the device model's C API (artifact/device.h);
#   artifact_tests(<OPTION>) and artifact_test(<name> SOURCES ... LIBRARIES ... [LABELS ...]
#     [WITH_COMMON_TESTS]): the GoogleTest executables, found by ctest (gtest_discover_tests),
#     built unless -D<OPTION>=OFF.
include_guard(GLOBAL)

set(ARTIFACT_COMMON_DIR ${CMAKE_CURRENT_LIST_DIR})

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
add_compile_options(-Wall -Wextra -Werror)

set(ARTIFACT_SANITIZE "" CACHE STRING "-fsanitize= value for every target (address,undefined; thread), empty for none")
if(ARTIFACT_SANITIZE)
  add_compile_options(-fsanitize=${ARTIFACT_SANITIZE} -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${ARTIFACT_SANITIZE})
endif()

find_package(Threads REQUIRED)

# CLI11 (header-only) parses the command lines (artifact/options.h).
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  message(FATAL_ERROR "CLI11 not found: apt-get install libcli11-dev (make setup installs it)")
endif()

add_library(artifact_common OBJECT ${ARTIFACT_COMMON_DIR}/src/atomic_file.cc ${ARTIFACT_COMMON_DIR}/src/command_line.cc
                           ${ARTIFACT_COMMON_DIR}/src/options.cc ${ARTIFACT_COMMON_DIR}/src/wire.cc
                           ${ARTIFACT_COMMON_DIR}/src/device_model.cc)
target_include_directories(artifact_common PUBLIC ${ARTIFACT_COMMON_DIR}/include)
target_link_libraries(artifact_common PUBLIC Threads::Threads PRIVATE CLI11::CLI11)

set(ARTIFACT_COMMON_TESTS ${ARTIFACT_COMMON_DIR}/tests/rng_test.cc ${ARTIFACT_COMMON_DIR}/tests/command_line_test.cc
                          ${ARTIFACT_COMMON_DIR}/tests/options_test.cc
                          ${ARTIFACT_COMMON_DIR}/tests/atomic_file_test.cc ${ARTIFACT_COMMON_DIR}/tests/wire_test.cc
                          ${ARTIFACT_COMMON_DIR}/tests/device_model_test.cc ${ARTIFACT_COMMON_DIR}/tests/quote_test.cc)
# The device model's wall-clock bounds (a system's tests labelled "timing" run them).
set(ARTIFACT_COMMON_TIMING_TESTS ${ARTIFACT_COMMON_DIR}/tests/device_model_timing_test.cc)

# libartifact_device.so: the device model behind a C API, for fio's engine and for Python (ctypes).
# Its own position-independent build of the model, so the static libraries stay as they are.
function(artifact_device_library)
  add_library(artifact_device SHARED ${ARTIFACT_COMMON_DIR}/src/device_model.cc ${ARTIFACT_COMMON_DIR}/src/device.cc)
  target_include_directories(artifact_device PUBLIC ${ARTIFACT_COMMON_DIR}/include)
  target_link_libraries(artifact_device PRIVATE Threads::Threads)
endfunction()

# The option <option> (ON) that builds the tests; when ON, GoogleTest must be there.
macro(artifact_tests option)
  option(${option} "Build the GoogleTest unit tests" ON)
  set(ARTIFACT_TESTS ${${option}})
  if(ARTIFACT_TESTS)
    find_package(GTest)
    if(NOT GTest_FOUND)
      message(FATAL_ERROR "GoogleTest not found: apt-get install libgtest-dev (or configure with -D${option}=OFF)")
    endif()
    enable_testing()
    include(GoogleTest)
  endif()
endmacro()

# One test executable (nothing when the tests are off); WITH_COMMON_TESTS adds the common library's.
function(artifact_test name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "WITH_COMMON_TESTS" "" "SOURCES;LIBRARIES;LABELS")
  if(NOT ARTIFACT_TESTS)
    return()
  endif()
  if(ARG_WITH_COMMON_TESTS)
    list(APPEND ARG_SOURCES ${ARTIFACT_COMMON_TESTS})
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBRARIES} GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${ARTIFACT_COMMON_DIR}/tests)  # scratch.h
  if(ARG_LABELS)
    gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}")
  else()
    gtest_discover_tests(${name})
  endif()
endfunction()
