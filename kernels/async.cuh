// Shared-memory staging for the tensor-core kernels: copies that arrive asynchronously (cp.async, sm_80) and the
// 8x8 matrix loads that hand mma its fragments (ldmatrix).

// 16 bytes from global to shared memory in flight; with `ok` false the 16 bytes are zeros and `src` is not read.
LK_DEVICE void lk_cp16(void* dst, const void* src, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(ok ? 16 : 0) : "memory");
}
// 4 bytes so (through L1).
LK_DEVICE void lk_cp4(void* dst, const void* src, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(ok ? 4 : 0) : "memory");
}
// Closes the group of copies issued since the last commit.
LK_DEVICE void lk_cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most N committed groups are still in flight.
template <int N>
LK_DEVICE void lk_cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// Four 8x8 matrices of 16-bit elements (8 rows of 16 bytes each) from shared memory: lanes 8i .. 8i + 7 name matrix
// i's rows; lane l receives 4 bytes at 4 (l % 4) of row l / 4 of each.
LK_DEVICE void lk_ldmatrix4(int (&r)[4], const void* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
// The same four matrices transposed: lane l receives elements (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4) of each
// (row, column), two elements of one column.
LK_DEVICE void lk_ldmatrix4_trans(int (&r)[4], const void* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
