// Checkpoints stored by content: uploads streamed to disk and digested with XXH3-128 on the way.
#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "coordinator/core.hpp"

namespace lt::coord {

// An upload's open file and running digest.
struct Upload::Impl {
  std::filesystem::path dir, tmp;
  uint64_t limit = UINT64_MAX;
  std::string head;  // the first bytes, until GGUF's magic is checked
  std::ofstream out;
  XXH3_state_t* st = XXH3_createState();
  ~Impl() { XXH3_freeState(st); }
};

Upload::Upload(const std::filesystem::path& dir, uint64_t limit) : impl_(std::make_unique<Impl>()) {
  std::filesystem::create_directories(dir);
  impl_->dir = dir;
  impl_->limit = limit;
  impl_->tmp = dir / ("upload-" + std::to_string(std::random_device{}()) + ".part");
  impl_->out.open(impl_->tmp, std::ios::binary | std::ios::trunc);
  if (!impl_->out) throw lt::Error("cannot write " + impl_->tmp.string());
  XXH3_128bits_reset(impl_->st);
}

Upload::~Upload() {
  if (!impl_->tmp.empty()) {
    std::error_code ec;
    std::filesystem::remove(impl_->tmp, ec);
  }
}

void Upload::append(uint64_t offset, const std::string& bytes) {
  if (offset != size_)
    throw InvalidArgument("upload: chunk at offset " + std::to_string(offset) + ", expected " + std::to_string(size_));
  if (bytes.size() > impl_->limit - size_)
    throw InvalidArgument("upload: past the coordinator's limit of " + std::to_string(impl_->limit) +
                          " bytes (--max-upload-gib)");
  if (impl_->head.size() < 4) {
    impl_->head += bytes.substr(0, 4 - impl_->head.size());
    if (impl_->head != std::string("GGUF").substr(0, impl_->head.size()))
      throw InvalidArgument("upload: not a GGUF file (it does not start with the magic GGUF)");
  }
  impl_->out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!impl_->out) throw lt::Error("upload: cannot write " + impl_->tmp.string());
  XXH3_128bits_update(impl_->st, bytes.data(), bytes.size());
  size_ += bytes.size();
}

std::string Upload::finish() {
  if (impl_->head != "GGUF") throw InvalidArgument("upload: not a GGUF file (shorter than its magic)");
  impl_->out.close();
  if (!impl_->out) throw lt::Error("upload: cannot write " + impl_->tmp.string());
  const XXH128_hash_t h = XXH3_128bits_digest(impl_->st);
  std::string d = hex128(h.high64, h.low64);
  std::filesystem::rename(impl_->tmp, impl_->dir / (d + ".gguf"));
  impl_->tmp.clear();
  return d;
}

}  // namespace lt::coord
