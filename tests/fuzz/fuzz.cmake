# The GGUF reader's fuzzing: a replay of tests/fuzz/corpus/ as a ctest test with the normal compiler, and, with
# -DLT_FUZZ=ON and clang, a libFuzzer binary (gguf_fuzz) built from the GGUF sources with sanitizers.
set(LT_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
file(GLOB LT_GGUF_FUZZ_SRCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/compiler/src/gguf/*.cpp)

add_executable(gguf_fuzz_replay ${LT_FUZZ_DIR}/gguf_fuzz.cpp ${LT_FUZZ_DIR}/replay_main.cpp)
target_link_libraries(gguf_fuzz_replay PRIVATE lt_compiler)
lt_warnings(gguf_fuzz_replay)
add_test(NAME gguf_fuzz_corpus COMMAND gguf_fuzz_replay ${LT_FUZZ_DIR}/corpus)

if(LT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "LT_FUZZ needs clang (configure with CXX=clang++-14)")
  endif()
  add_executable(gguf_fuzz ${LT_FUZZ_DIR}/gguf_fuzz.cpp ${LT_GGUF_FUZZ_SRCS})
  target_include_directories(gguf_fuzz PRIVATE ${PROJECT_SOURCE_DIR}/compiler/include)
  target_compile_options(gguf_fuzz PRIVATE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1)
  target_link_options(gguf_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(gguf_fuzz PRIVATE PkgConfig::XXHASH)
endif()
