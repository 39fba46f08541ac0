// The kernel library's source text, embedded at build time from kernels/*.cuh.
#pragma once

#include <span>
#include <string_view>

namespace lt::kernels {

// One file of the kernel library: its name (`gemv.cuh`) and its text.
struct Source {
  std::string_view name;
  std::string_view text;
};

// Every file of the library, sorted by name.
std::span<const Source> sources();

// The text of the file `name`; throws std::out_of_range when the library has no such file.
std::string_view source(std::string_view name);

}  // namespace lt::kernels
