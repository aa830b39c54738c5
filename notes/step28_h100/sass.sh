#!/bin/bash
# On the GPU machine: step 27's SASS (cuobjdump), for reading its consumer loop.
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
export PYTHONPATH=.:$PYTHONPATH
python - <<'PY'
import io, os, pathlib, subprocess
from matmulstudy.study.registry import load_registry
from matmulstudy.measure import build
reg = load_registry()
for vid in ("gpu_wgmma_queued",):
    c = pathlib.Path(f"/tmp/{vid}.cubin")
    build.build(reg[vid], c, pathlib.Path(f"/tmp/{vid}.json"), "sm_90a", io.StringIO())
    out = subprocess.run(["cuobjdump", "-sass", str(c)], capture_output=True, text=True).stdout
    pathlib.Path(os.environ["OUT"], f"{vid}.sass").write_text(out)
    print(vid, len(out.splitlines()), "lines")
PY
