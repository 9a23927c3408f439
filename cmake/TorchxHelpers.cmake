# Helpers that keep per-folder CMakeLists short (in the style of Abseil's CMake helpers).

# Common warning set; TORCHX_WERROR turns them into errors (CI sets it).
function(torchx_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Wnon-virtual-dtor)
  if(TORCHX_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# torchx_cc_test(NAME foo_test SRCS a_test.cc b_test.cc DEPS lib... LABELS unit)
function(torchx_cc_test)
  cmake_parse_arguments(T "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SRCS})
  torchx_set_warnings(${T_NAME})
  target_link_libraries(${T_NAME} PRIVATE ${T_DEPS} torchx_testing GTest::gmock GTest::gtest_main)
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  gtest_discover_tests(${T_NAME}
    PROPERTIES LABELS "${T_LABELS}"
    DISCOVERY_TIMEOUT 30)
endfunction()
