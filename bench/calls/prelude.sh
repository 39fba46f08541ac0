# Sourced by the device calls' scripts: the carried lane-tune bundle unpacked, its libraries and nvcc in the paths.
mkdir -p /tmp/c && tar xJf .carry/bundle.tar.xz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/lib:/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu LT_NVCC=/usr/local/cuda/bin/nvcc PATH=/usr/local/cuda/bin:$PATH
L=/tmp/c/lane-tune
