// A checkpoint file's content digest: the key the coordinator stores checkpoints by and the worker verifies
// downloads with.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace lt {

// A 64-bit hash as 16 hex digits, and a 128-bit one (its high half first) as 32: how lane-tune writes hashes.
std::string hex64(uint64_t v);
std::string hex128(uint64_t high, uint64_t low);

// XXH3-128 of the file's bytes as 32 hex digits; throws lt::NotFound when there is no such file, lt::Error when it
// cannot be read.
std::string content_digest(const std::filesystem::path& path);

// Whether `d` is written as content_digest writes one: 32 lower-case hex digits (and so safe in a file name).
bool is_digest(const std::string& d);

}  // namespace lt
