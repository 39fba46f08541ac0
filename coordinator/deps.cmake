# lt_coordinator's links: the database, the wire, the compiler (knob spaces, model recognition), xxHash (digests),
# OpenSSL's libcrypto (workers' keys: random bytes and SHA-256), gRPC's server reflection, cpp-httplib (/metrics),
# libsystemd (sd_notify),
# XGBoost's C API (the model strategy's cost model; Debian's libxgboost-dev, whose CMake package names a missing
# /usr/bin/xgboost, so the header and the library are found directly).
find_path(LT_XGBOOST_INCLUDE xgboost/c_api.h)
find_library(LT_XGBOOST_LIB xgboost)
if(NOT LT_XGBOOST_INCLUDE OR NOT LT_XGBOOST_LIB)
  message(FATAL_ERROR "lane-tune: XGBoost's C API not found: install libxgboost-dev (scripts/setup.sh)")
endif()
target_include_directories(lt_coordinator SYSTEM PRIVATE ${LT_XGBOOST_INCLUDE})
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
target_link_libraries(lt_coordinator PUBLIC lt_db lt_proto lt_compiler PRIVATE PkgConfig::XXHASH ${LT_XGBOOST_LIB}
                                                                                OpenSSL::Crypto gRPC::grpc++_reflection
                                                                                PkgConfig::HTTPLIB PkgConfig::SYSTEMD)
