# The parsers' fuzzing: the GGUF reader (gguf_fuzz, corpus/), the text parsers, knobs' JSON and a lane's output
# (text_fuzz, corpus_text/), and the coordinator's RPC requests, decoded and answered in process (rpc_fuzz,
# corpus_rpc/, written by make_rpc_corpus.py). Each corpus is replayed as a ctest test with the normal compiler; with
# -DLT_FUZZ=ON and clang, libFuzzer binaries are built with sanitizers.
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
add_executable(rpc_fuzz_replay ${LT_FUZZ_DIR}/rpc_fuzz.cpp ${LT_FUZZ_DIR}/replay_main.cpp)
target_include_directories(rpc_fuzz_replay PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(rpc_fuzz_replay PRIVATE lt_coordinator)
lt_warnings(rpc_fuzz_replay)
add_test(NAME rpc_fuzz_corpus COMMAND rpc_fuzz_replay ${LT_FUZZ_DIR}/corpus_rpc)

# The same replays under AddressSanitizer and UndefinedBehaviorSanitizer (GCC's, in build-essential), built from the
# parsers' own sources: an out-of-bounds read that does not crash fails here.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=address,undefined")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=address,undefined")
check_cxx_source_compiles("int main() { return 0; }" LT_HAVE_SANITIZERS)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(LT_HAVE_SANITIZERS)
  set(LT_SAN -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g)
  # (the GGUF sources compiled once under the sanitizers for both replays: the text replay's shapes plan through synth)
  add_library(lt_gguf_san OBJECT ${LT_GGUF_FUZZ_SRCS})
  add_executable(gguf_fuzz_replay_san ${LT_FUZZ_DIR}/gguf_fuzz.cpp ${LT_FUZZ_DIR}/replay_main.cpp
                                      $<TARGET_OBJECTS:lt_gguf_san>)
  add_executable(text_fuzz_replay_san ${LT_FUZZ_DIR}/text_fuzz.cpp ${LT_FUZZ_DIR}/replay_main.cpp
                                      ${PROJECT_SOURCE_DIR}/compiler/src/lane/knobs.cpp
                                      ${PROJECT_SOURCE_DIR}/compiler/src/lane/output.cpp
                                      ${PROJECT_SOURCE_DIR}/compiler/src/synth/presets.cpp
                                      ${PROJECT_SOURCE_DIR}/compiler/src/synth/synth.cpp
                                      ${PROJECT_SOURCE_DIR}/compiler/src/synth/quantize.cpp
                                      ${PROJECT_SOURCE_DIR}/compiler/src/model/recognize.cpp
                                      $<TARGET_OBJECTS:lt_gguf_san>)
  target_include_directories(lt_gguf_san PRIVATE ${PROJECT_SOURCE_DIR}/compiler/include ${PROJECT_SOURCE_DIR})
  target_compile_options(lt_gguf_san PRIVATE ${LT_SAN})
  target_link_libraries(lt_gguf_san PRIVATE nlohmann_json::nlohmann_json PkgConfig::XXHASH)
  foreach(t gguf_fuzz_replay_san text_fuzz_replay_san)
    target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/compiler/include ${PROJECT_SOURCE_DIR})
    target_compile_options(${t} PRIVATE ${LT_SAN})
    target_link_options(${t} PRIVATE -fsanitize=address,undefined)
    target_link_libraries(${t} PRIVATE nlohmann_json::nlohmann_json PkgConfig::XXHASH)
  endforeach()
  add_test(NAME gguf_fuzz_corpus_sanitized COMMAND gguf_fuzz_replay_san ${LT_FUZZ_DIR}/corpus)
  add_test(NAME text_fuzz_corpus_sanitized COMMAND text_fuzz_replay_san ${LT_FUZZ_DIR}/corpus_text)
  # The RPC corpus too: the coordinator, the database, the wire and the compiler rebuilt from their own sources under
  # the sanitizers (what they link, gRPC, protobuf, SQLite, XGBoost, OpenSSL, cpp-httplib and libsystemd, as Debian
  # builds it).
  if(TARGET lt_coordinator)
    set(LT_SAN_SRCS "")
    set(LT_SAN_INCLUDES "")
    foreach(t lt_coordinator lt_db lt_proto lt_compiler lt_kernels)
      get_target_property(srcs ${t} SOURCES)
      get_target_property(dir ${t} SOURCE_DIR)
      foreach(f IN LISTS srcs)
        if(NOT IS_ABSOLUTE ${f})
          set(f ${dir}/${f})
        endif()
        list(APPEND LT_SAN_SRCS ${f})
      endforeach()
      get_target_property(inc ${t} INCLUDE_DIRECTORIES)
      if(inc)
        list(APPEND LT_SAN_INCLUDES ${inc})
      endif()
    endforeach()
    add_executable(rpc_fuzz_replay_san ${LT_FUZZ_DIR}/rpc_fuzz.cpp ${LT_FUZZ_DIR}/replay_main.cpp ${LT_SAN_SRCS})
    target_include_directories(rpc_fuzz_replay_san PRIVATE ${PROJECT_SOURCE_DIR}/tests ${LT_SAN_INCLUDES})
    target_include_directories(rpc_fuzz_replay_san SYSTEM PRIVATE ${LT_XGBOOST_INCLUDE})
    target_compile_definitions(rpc_fuzz_replay_san PRIVATE LT_VERSION="${PROJECT_VERSION}" LT_NVCC_DEFAULT="${LT_NVCC}")
    target_compile_options(rpc_fuzz_replay_san PRIVATE ${LT_SAN})
    target_link_options(rpc_fuzz_replay_san PRIVATE -fsanitize=address,undefined)
    target_link_libraries(rpc_fuzz_replay_san PRIVATE protobuf::libprotobuf gRPC::grpc++ PkgConfig::SQLITE3
                                                      PkgConfig::XXHASH nlohmann_json::nlohmann_json Threads::Threads
                                                      ${LT_XGBOOST_LIB} OpenSSL::Crypto gRPC::grpc++_reflection
                                                      PkgConfig::HTTPLIB PkgConfig::SYSTEMD)
    add_dependencies(rpc_fuzz_replay_san lt_proto lt_kernels)  # (their generated sources)
    add_test(NAME rpc_fuzz_corpus_sanitized COMMAND rpc_fuzz_replay_san ${LT_FUZZ_DIR}/corpus_rpc)
    set_tests_properties(rpc_fuzz_corpus_sanitized PROPERTIES
                         ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1")
  endif()
  set_tests_properties(gguf_fuzz_corpus_sanitized text_fuzz_corpus_sanitized PROPERTIES
                       ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1")
else()
  message(WARNING "no -fsanitize=address,undefined here: the fuzz corpora replay without sanitizers only")
endif()

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
  # The RPC handlers and the core under them instrumented (the coordinator's and the database's sources); the wire and
  # the compiler linked as they are.
  file(GLOB LT_SERVICE_FUZZ_SRCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/coordinator/src/*.cpp
       ${PROJECT_SOURCE_DIR}/db/src/*.cpp)
  add_executable(rpc_fuzz ${LT_FUZZ_DIR}/rpc_fuzz.cpp ${LT_SERVICE_FUZZ_SRCS})
  target_include_directories(rpc_fuzz PRIVATE ${PROJECT_SOURCE_DIR}/coordinator/include ${PROJECT_SOURCE_DIR}/db/include
                                              ${PROJECT_SOURCE_DIR}/tests)
  target_include_directories(rpc_fuzz SYSTEM PRIVATE ${LT_XGBOOST_INCLUDE})
  target_compile_options(rpc_fuzz PRIVATE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1)
  target_link_options(rpc_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(rpc_fuzz PRIVATE lt_proto lt_compiler PkgConfig::SQLITE3 PkgConfig::XXHASH ${LT_XGBOOST_LIB}
                                         nlohmann_json::nlohmann_json gRPC::grpc++_reflection PkgConfig::HTTPLIB
                                         PkgConfig::SYSTEMD)
endif()
