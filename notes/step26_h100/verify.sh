#!/bin/bash
# On the GPU machine: after the launch.py mend (Padding launches the kernel through _kernel_launcher), the GPU tests
# of every variant with align_rows (steps 24 to 27) on the ragged shapes, and the timing tests.
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
timeout 400 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_kernels.py tests/test_gpu_timing.py -k "aligned or lean or persistent or queued or timing" 2>&1 | tail -4
