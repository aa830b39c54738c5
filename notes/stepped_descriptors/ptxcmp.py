# dev, no GPU needed: every CUDA variant's PTX into OUTDIR (python ptxcmp.py OUTDIR), without the source file
# names and line numbers. Run it before and after a change to the kernels, in the same place (git stash; run;
# git stash pop; run), then `diff -r` the two: the same PTX gives the same SASS with the same ptxas (internal
# names carry a hash of the file's path, so two trees in two places never compare equal). A difference is
# checked with sasscmp.py (cuobjdump comes with the test extras; no GPU needed either).
import pathlib, re, subprocess, sys
from matmulstudy.study.registry import load_registry
from matmulstudy.measure import build
out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
for vid, v in load_registry().items():
    if v.backend == "cuda":
        ptx = out / f"{vid}.ptx"
        cmd = [c for c in build.nvcc_command(v, "sm_90a" if v.needs == "sm_90a" else "sm_90", ptx)
               if c not in ("-cubin", "-Xptxas=-v")]
        subprocess.run(cmd[:1] + ["-ptx"] + cmd[1:], check=True, capture_output=True)
        ptx.write_text(re.sub(r'^\s*\.(file|loc)\s.*$|^//.*$', "", ptx.read_text(), flags=re.M))
