#!/bin/bash
# On the GPU machine (nvidia-h100-x1), on the branch whose switches the builds name: notes/step26_h100/ablate.py's
# timing (two rounds, bits against step 25's) into $OUT/LABEL.txt, and with SASS=1 each build's SASS beside it.
#   bash notes/step28_h100/ablate.sh clock_ablate hint1ms=WAIT_SUSPEND_NS@1000000 ... --sizes 4096,8192
# Run so: clock_ablate (branch attempt/tf32-clock: hint1ms=WAIT_SUSPEND_NS@1000000 hint20us=WAIT_SUSPEND_NS@20000
# g4=GROUP@4 g16=GROUP@16), fetch_ablate (the same branch: one=FETCH_ONE_LANE@1
# onehint=FETCH_ONE_LANE@1:WAIT_SUSPEND_NS@20000), lean_ablate (branch attempt/tf32-lean-loop, SASS=1:
# leanloop=LEAN_LOOP@1), kblock (branch attempt/tf32-kblock, SASS=1: kb1=KBLOCK@1:KBLOCK_ORDER@1
# kb2=KBLOCK@1:KBLOCK_ORDER@2), all with --sizes 4096,8192.
LABEL=$1; shift
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
PYTHONPATH=.:$PYTHONPATH python notes/step26_h100/ablate.py "$@" > $OUT/$LABEL.txt 2>&1
tail -12 $OUT/$LABEL.txt
if [ "$SASS" = 1 ]; then
  for c in /tmp/ablate/*.cubin; do cuobjdump -sass $c > $OUT/$(basename $c .cubin).sass; done
fi
