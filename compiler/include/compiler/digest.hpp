// A checkpoint file's content digest: the key the coordinator stores checkpoints by and the worker verifies
// downloads with.
#pragma once

#include <filesystem>
#include <string>

namespace lt {

// XXH3-128 of the file's bytes as 32 hex digits; throws lt::Error when the file cannot be read.
std::string content_digest(const std::filesystem::path& path);

}  // namespace lt
