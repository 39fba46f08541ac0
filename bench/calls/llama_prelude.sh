# Sourced by the device calls' scripts after prelude.sh, carrying .llama/llama-bench.xz (and .llama/lib where it was
# built here): llama.cpp's llama-bench unpacked as /tmp/llama-bench, its libgomp and NCCL stand-in (bench/nccl_stub.c;
# a llama-bench built on the GPU machine needs neither) after CUDA's libraries.
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.llama/lib
