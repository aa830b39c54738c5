# dev: every built variant's SASS (or those of the chapters named) from this tree against HEAD's kernels (in _head/), instruction text compared
import io, pathlib, re, sys
from matmulstudy.study.registry import load_registry
from matmulstudy.measure import build, hardware
new, old = load_registry(), load_registry("_head/kernels/registry.yaml")
out = pathlib.Path("/tmp/sasscmp"); out.mkdir(exist_ok=True)
same, diff = [], []
for vid, v in new.items():
    if v.backend != "cuda" or vid not in old or (len(sys.argv) > 1 and v.chapter not in sys.argv[1:]):
        continue
    texts = []
    for tag, reg in (("new", new), ("old", old)):
        w = reg[vid]; c = out / f"{vid}_{tag}.cubin"
        build.build(w, c, out / f"{vid}_{tag}.json", w.target("sm_90a" if w.needs == "sm_90a" else "sm_90"), io.StringIO())
        texts.append(re.sub(r"/\*[0-9a-f]{4,}\*/", "", hardware.disassemble(c)))
    (same if texts[0] == texts[1] else diff).append(vid)
print(f"SASS same: {len(same)}; differs: {diff}")
