// Checkpoints stored by content: uploads streamed to disk and digested with XXH3-128 on the way, and files named by
// path read into the store the same way through one descriptor.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
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

namespace {
// A descriptor closed when it goes out of scope.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

bool same_version(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}
}  // namespace

void read_into(Upload& u, const std::filesystem::path& path) {
  const Descriptor d{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)};
  if (d.fd < 0) throw InvalidArgument("the coordinator cannot read " + path.string() + ": " + std::strerror(errno));
  // Where the descriptor leads, in the kernel's words: the file checked against the allowed folders, with no link
  // swapped into the path since it was resolved.
  char there[PATH_MAX];
  const ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(d.fd)).c_str(), there, sizeof there);
  if (n <= 0 || size_t(n) >= sizeof there || std::string(there, size_t(n)) != path.string())
    throw PermissionDenied("the coordinator reads checkpoints by path only under the folders it allows (" +
                           path.string() + " moved while it was opened)");
  struct stat before {};
  if (::fstat(d.fd, &before) != 0 || !S_ISREG(before.st_mode))
    throw InvalidArgument("the coordinator cannot read " + path.string() + ": not a regular file");
  std::string chunk(size_t(1) << 20, '\0');
  for (;;) {
    const ssize_t got = ::pread(d.fd, chunk.data(), chunk.size(), off_t(u.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InvalidArgument("the coordinator cannot read " + path.string() + ": " + std::strerror(errno));
    if (got == 0) break;
    u.append(u.size(), chunk.substr(0, size_t(got)));
  }
  // What was read is one version of the file: the same size as at the start, not written meanwhile.
  struct stat after {};
  if (::fstat(d.fd, &after) != 0 || !same_version(before, after) || u.size() != uint64_t(before.st_size))
    throw InvalidArgument(path.string() + " changed while the coordinator read it (" + std::to_string(u.size()) +
                          " bytes read of " + std::to_string(before.st_size) +
                          "): submit it again once it is written in full");
}

}  // namespace lt::coord
