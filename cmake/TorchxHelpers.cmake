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

# torchx_add_backend(NAME slurm NAMESPACE torchx::schedulers::slurm SOURCES a.cc b.cc DEPS lib...)
# One scheduler back-end as its own static library torchx_backend_<NAME>, linked above the
# scheduler API. Its NAMESPACE exports `std::vector<SchedulerEntry> BackendSchedulers()`; the
# generated table (torchx_generate_backend_table) calls it, so adding a back-end touches neither
# the scheduler base nor the registry. Back-ends are listed in the order they are added: the
# first one's first entry is the default scheduler.
function(torchx_add_backend)
  cmake_parse_arguments(B "" "NAME;NAMESPACE" "SOURCES;DEPS" ${ARGN})
  set(target torchx_backend_${B_NAME})
  add_library(${target} STATIC ${B_SOURCES})
  target_link_libraries(${target} PUBLIC torchx_scheduler_api PRIVATE ${B_DEPS})
  set(TORCHX_BACKEND_TARGETS ${TORCHX_BACKEND_TARGETS} ${target} PARENT_SCOPE)
  set(TORCHX_BACKEND_NAMESPACES ${TORCHX_BACKEND_NAMESPACES} ${B_NAMESPACE} PARENT_SCOPE)
endfunction()

# Writes the table of linked-in back-ends (src/plugins/builtin_backends.cc.in) to OUT.
function(torchx_generate_backend_table out)
  set(decls "")
  set(calls "")
  foreach(ns IN LISTS TORCHX_BACKEND_NAMESPACES)
    string(APPEND decls "namespace ${ns} {\nstd::vector<torchx::schedulers::SchedulerEntry> BackendSchedulers();\n}\n")
    if(calls)
      string(APPEND calls ", ")
    endif()
    string(APPEND calls "&${ns}::BackendSchedulers")
  endforeach()
  set(TORCHX_BACKEND_DECLARATIONS "${decls}")
  set(TORCHX_BACKEND_FUNCTIONS "${calls}")
  configure_file("${PROJECT_SOURCE_DIR}/src/plugins/builtin_backends.cc.in" "${out}" @ONLY)
endfunction()
