// A program's uploads of its weights and constants by the formats its kernels read them in (formats.cuh's lk_q8,
// lk_blk, lk_plain): thin wrappers, in the program's own file, over the host runtime's pools and host work
// (host_api.cuh), which need no format's type.

// A Q8_0 matrix as int8 rows and f16 scales.
inline lk_q8 lk_upload_q8(const uint8_t* file, uint64_t offset, size_t rows, size_t cols, bool host) {
  signed char* q = nullptr;
  __half* s = nullptr;
  lk_upload_q8_rows(file, offset, rows, cols, host, &q, &s);
  return lk_q8{q, s};
}

#if LK_WITH_BLOCKS
// A block-format matrix as its planes (lk_upload_planes), each carved apart.
template <int T>
lk_blk<T> lk_upload_blocks(const uint8_t* file, uint64_t offset, size_t rows, size_t cols, bool host) {
  uint8_t* dev[4] = {};
  lk_upload_planes(T, file + offset, rows * cols, host, dev);
  return lk_blk<T>{dev[0], dev[1], dev[2], (const __half*)dev[3]};
}
#endif  // LK_WITH_BLOCKS

// A matrix of plain elements straight from the checkpoint.
template <class W>
lk_plain<W> lk_upload_plain(const uint8_t* file, uint64_t offset, size_t rows, size_t cols, bool host) {
  return lk_plain<W>{(W*)lk_upload_bytes(file + offset, rows * cols * sizeof(W), host)};
}

// An f32 vector (a norm's weights, a bias) straight from the checkpoint.
inline float* lk_upload_f32(const uint8_t* file, uint64_t offset, size_t n) {
  return (float*)lk_upload_bytes(file + offset, n * 4, false);
}

// A computed constant of the sidecar, `n` lk_act values at byte `offset`.
inline lk_act* lk_upload_side(const std::vector<uint8_t>& side, size_t offset, size_t n) {
  return (lk_act*)lk_upload_bytes(side.data() + offset, n * sizeof(lk_act), false);
}
