#!/usr/bin/env bash
# The paper-shaped figures from ffsim's own output (needs python3-matplotlib; build first):
#   docs/plots/allreduce.png   HFReduce against NCCL, 184 MiB allreduce, 16..1440 GPUs (closed
#                              forms and the fluid simulation of every chunk), with the published
#                              ranges shaded (arXiv 2408.14158 Fig. 7)
#   docs/plots/train-*.png     step time and scaling efficiency of the paper's four experiments,
#                              HFReduce backend against NCCL (arXiv 2408.14158 Sec. V)
#   docs/plots/plan.png        Fire-Flyer 2 against the DGX-A100 cluster: switches, cost and power
#                              per GPU against the GPU count (ffsim plan --sweep)
# The JSON each figure was drawn from is kept beside it (docs/plots/*.json).
# Usage: scripts/plots.sh [--quick]   (--quick: collectives by closed form in the training steps)
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
source "$(dirname "$0")/ffsim-env.sh" "$@"
# The first python3 with matplotlib (a pyenv python3 may shadow Debian's, which has the package).
PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" > /dev/null && "$p" -c "import matplotlib" 2> /dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "python3-matplotlib is missing (apt-get install python3-matplotlib)"; exit 2; }
coll=simulate; [ $quick = 1 ] && coll=estimate
out=docs/plots
mkdir -p "$out"
$FF collective $SC --algo hfreduce,nccl --gpus 16,32,64,128,256,512,1024,1440 --json > "$out/allreduce.json"
$FF collective $SC --algo hfreduce,nccl --gpus 16,32,64,128,256,512,1024,1440 --engine fluid --json > "$out/allreduce-fluid.json"
$PY scripts/plot.py collective "$out/allreduce.json" "$out/allreduce-fluid.json" --envelope \
  -o "$out/allreduce.png" --title "184 MiB allreduce on Fire-Flyer 2 (ffsim; shaded: published ranges)"
# The same allreduce against its size, nccl-tests' curve (closed forms; a simulation of every size
# at 1,440 GPUs would take minutes): where NCCL switches from ring to tree, where HFReduce pays off.
$FF collective $SC --algo hfreduce,nccl --gpus 16,128,1440 --size 64KiB:1GiB --json > "$out/allreduce-sizes.json"
$PY scripts/plot.py collective "$out/allreduce-sizes.json" -o "$out/allreduce-sizes.png" \
  --title "allreduce on Fire-Flyer 2 against the size per GPU (ffsim, closed forms)"
# The published scaling claims (arXiv 2408.14158 Sec. V; ../shared/reference/fire-flyer-facts.md
# section 4), drawn as markers for comparison: validation targets, not inputs.
declare -A claims=([vgg16-ddp]="--claim 512:88" [gpt2-fsdp]="--claim 128:95" [llama13b-pp]="--claim 512:91"
                   [moe16b]="--claim 320:92.92 --claim 640:76.14")
for t in vgg16-ddp gpt2-fsdp llama13b-pp moe16b; do
  for b in hfreduce nccl; do
    $FF train scenarios/train-$t.json --backend $b --collectives $coll --json > "$out/train-$t-$b.json"
  done
  # shellcheck disable=SC2086
  $PY scripts/plot.py train "$out/train-$t-hfreduce.json" "$out/train-$t-nccl.json" ${claims[$t]} -o "$out/train-$t.png"
done
$FF plan scenarios/fire-flyer-2.json scenarios/dgx-a100-cluster.json --sweep gpus=512,1024,2048,4096,8192,9600,12000 \
  --json > "$out/plan.json"
$PY scripts/plot.py plan "$out/plan.json" -o "$out/plan.png"
ls -l "$out"
