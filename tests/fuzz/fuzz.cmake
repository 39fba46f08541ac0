# The parsers' fuzzing: the GGUF reader (gguf_fuzz, corpus/) and the text parsers, knobs' JSON and a lane's output
# (text_fuzz, corpus_text/). Each corpus is replayed as a ctest test with the normal compiler; with -DLT_FUZZ=ON and
# clang, libFuzzer binaries are built with sanitizers.
set(LT_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
file(GLOB LT_GGUF_FUZZ_SRCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/compiler/src/gguf/*.cpp)

add_executable(gguf_fuzz_replay ${LT_FUZZ_DIR}/gguf_fuzz.cpp ${LT_FUZZ_DIR}/replay_main.cpp)
target_link_libraries(gguf_fuzz_replay PRIVATE lt_compiler)
lt_warnings(gguf_fuzz_replay)
add_test(NAME gguf_fuzz_corpus COMMAND gguf_fuzz_replay ${LT_FUZZ_DIR}/corpus)
add_executable(text_fuzz_replay ${LT_FUZZ_DIR}/text_fuzz.cpp ${LT_FUZZ_DIR}/replay_main.cpp)
target_link_libraries(text_fuzz_replay PRIVATE lt_compiler)
lt_warnings(text_fuzz_replay)
add_test(NAME text_fuzz_corpus COMMAND text_fuzz_replay ${LT_FUZZ_DIR}/corpus_text)

if(LT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "LT_FUZZ needs clang (configure with CXX=clang++-14)")
  endif()
  add_executable(gguf_fuzz ${LT_FUZZ_DIR}/gguf_fuzz.cpp ${LT_GGUF_FUZZ_SRCS})
  target_include_directories(gguf_fuzz PRIVATE ${PROJECT_SOURCE_DIR}/compiler/include)
  target_compile_options(gguf_fuzz PRIVATE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1)
  target_link_options(gguf_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(gguf_fuzz PRIVATE PkgConfig::XXHASH)
  # The text parsers need the knobs and the model (the compiler's sources, less the CLI-free parts are all of them).
  file(GLOB_RECURSE LT_COMPILER_FUZZ_SRCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/compiler/src/*.cpp)
  add_executable(text_fuzz ${LT_FUZZ_DIR}/text_fuzz.cpp ${LT_COMPILER_FUZZ_SRCS})
  target_include_directories(text_fuzz PRIVATE ${PROJECT_SOURCE_DIR}/compiler/include ${PROJECT_SOURCE_DIR})
  target_compile_definitions(text_fuzz PRIVATE LT_VERSION="fuzz" LT_NVCC_DEFAULT="nvcc")
  target_compile_options(text_fuzz PRIVATE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1)
  target_link_options(text_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(text_fuzz PRIVATE lt_kernels nlohmann_json::nlohmann_json Threads::Threads PkgConfig::XXHASH)
endif()
