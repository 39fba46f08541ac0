// The lane program's exit codes, in one place: the lane's host code (the runtime, resident.cuh, the emitted main) exits
// with them, and the compiler's reader of a run (compiler/lane_output.hpp) includes this file as C++ to name them.
#ifndef LK_EXITS_CUH
#define LK_EXITS_CUH

enum lk_exit : int {
  LK_EXIT_OK = 0,
  LK_EXIT_CUDA = 1,              // a CUDA call failed (or the profiler could not record the launches)
  LK_EXIT_USAGE = 2,             // a bad command line, prompt file, manifest or image
  LK_EXIT_WRONG_CHECKPOINT = 3,  // a checkpoint or sidecar other than its own
  LK_EXIT_DOES_NOT_FIT = 4,      // the device (or mapped host memory) cannot hold the lane
  LK_EXIT_ACCOUNTING = 5,        // the program allocated other than the bytes it declared
};

#endif
