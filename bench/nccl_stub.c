/* A stand-in for NCCL's library for llama-bench on one GPU (bench/llama_build.sh): llama.cpp calls NCCL only to join
   several GPUs; on one, nothing here is called. Every function reports failure. */
int ncclAllReduce(void) { return 1; }
int ncclCommDestroy(void) { return 1; }
int ncclCommInitAll(void) { return 1; }
const char* ncclGetErrorString(int r) { (void)r; return "NCCL is a stub here (bench/llama_build.sh)"; }
int ncclGroupEnd(void) { return 1; }
int ncclGroupStart(void) { return 1; }
