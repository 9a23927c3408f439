#!/usr/bin/env bash
# Drives the built torchx binary and checks stdout, stderr and exit codes.
# Usage: cli_test.sh <torchx binary> <source dir>
set -u
TORCHX=$(realpath "$1")
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

check() {  # check <name> <expected rc> <expected stdout/stderr substring> -- cmd...
  local name=$1 want_rc=$2 want=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [[ $rc -eq $want_rc && "$out" == *"$want"* ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $name: rc=$rc (want $want_rc), output:"
    echo "$out" | head -20
    echo "(wanted substring: $want)"
  fi
}

check "version flag" 0 "torchx-" -- "$TORCHX" --version
# The composite driver's old name stays an alias (beside a built or installed torchx).
if [[ -x "$(dirname "$TORCHX")/torchx-pipeline-driver" ]]; then
  check "torchx-pipeline-driver runs torchx-composite-driver" 2 "usage: torchx-composite-driver" -- \
    "$(dirname "$TORCHX")/torchx-pipeline-driver"
fi
check "version verb" 0 "torchx-" -- "$TORCHX" version
check "no subcommand prints help, exits 1" 1 "Subcommands" -- "$TORCHX"
check "unknown verb is a usage error" 2 "" -- "$TORCHX" frobnicate
check "a verb typo is named with the closest verb" 2 "torchx: error: unknown command \`stauts\`. Did you mean \`status\`?" -- "$TORCHX" stauts x
check "an option typo names the verb and the closest option" 2 "torchx: error: unknown option \`--jsn\` for \`torchx status\`. Did you mean \`--json\`?" -- "$TORCHX" status --jsn local_cwd://torchx/x
check "an unknown run option is not a missing component" 2 "run: unknown option \`--wiat\`" -- "$TORCHX" run --wiat utils.echo
check "an unknown run option gets a suggestion" 2 "Did you mean \`--wait\`?" -- "$TORCHX" run --wiat utils.echo
check "an unknown scheduler is named as such, with the submittable ones" 2 "run: unknown scheduler \`slurmm\`. Did you mean \`slurm\`? Schedulers: local_cwd, local, local_docker, slurm, kubernetes, ray." -- "$TORCHX" run -s slurmm utils.echo
check "dryrun prints application" 0 "=== APPLICATION ===" -- "$TORCHX" run --dryrun "$SRC/examples/echo.yaml"
check "dryrun expands macros per replica" 0 "echo/1:" -- "$TORCHX" run --dryrun "$SRC/examples/echo.yaml"
out=$("$TORCHX" run --dryrun "$SRC/examples/echo.yaml")
request=${out#*=== SCHEDULER REQUEST ===}
if [[ "$request" == *"cmd: /bin/echo 'hello from' echo-"*" replica 1"* && "$request" != *'${'* ]]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: replica_id macro not substituted in dry run"; echo "$out"; fi

echo '{"name": "x", "roles": [{"name": "r", "entrypoint": "true", "num_replicas": 0, "resource": "cpu.small"}]}' > "$TMP/bad.json"
check "invalid spec names field, exits 2" 2 "num_replicas: must be >= 1" -- "$TORCHX" run --dryrun "$TMP/bad.json"
echo '{"name": "x", "rolez": []}' > "$TMP/typo.json"
check "unknown field suggests" 2 "Did you mean \`roles\`?" -- "$TORCHX" run --dryrun "$TMP/typo.json"
check "missing spec file" 2 "cannot be read" -- "$TORCHX" run --dryrun "$TMP/nope.json"

# components
check "builtins lists 12" 0 "Found 12 builtin components:" -- "$TORCHX" builtins
check "builtins --print" 0 "def ddp(" -- "$TORCHX" builtins --print dist.ddp
check "builtins --print unknown" 2 "Did you mean \`utils.echo\`?" -- "$TORCHX" builtins --print utils.ech
check "component help exits 0" 0 "usage: torchx run <run args...> dist.ddp" -- "$TORCHX" run dist.ddp --help
check "--help after a positional belongs to *args" 0 "<--help>" -- "$TORCHX" run --scheduler local_cwd --wait --log utils.sh printf '<%s>\n' --help
check "--help among options still shows the component's help" 0 "usage: torchx run <run args...> utils.sh" -- "$TORCHX" run utils.sh --num_replicas 1 --help
check "run --log streams a retried attempt too" 0 "sh/0 second-attempt" -- "$TORCHX" run --scheduler local_cwd --log utils.sh --max_retries 1 sh -c "if [ -e '$TMP/retried' ]; then echo second-attempt; else touch '$TMP/retried'; echo first-attempt; exit 3; fi"
HR=$("$TORCHX" run --wait utils.sh --max_retries 1 sh -c "if [ -e '$TMP/retried2' ]; then echo second-attempt; else touch '$TMP/retried2'; echo first-attempt; exit 3; fi" 2>/dev/null)
check "log --attempt 0 is the first run of a retried replica" 0 "sh/0 first-attempt" -- "$TORCHX" log --attempt 0 "$HR"
check "log without --attempt is the latest run" 0 "sh/0 second-attempt" -- "$TORCHX" log "$HR"
check "log --attempt past the last names the attempts" 2 "sh/0 has no attempt 5; its attempts are 0..1" -- "$TORCHX" log --attempt 5 "$HR/sh/0"
check "dist.torchrun: a bare -j with -h is nodes x the host's GPUs" 0 "--nnodes 2 --nproc_per_node 1" -- "$TORCHX" run --dryrun dist.torchrun -j 2 -h gpu.small --script train.py
check "dist.torchrun: a bare -j without -h is processes on one node" 0 "--nnodes 1 --nproc_per_node 3" -- "$TORCHX" run --dryrun dist.torchrun -j 3 --script train.py
check "dist.ddp warns as TorchX's deprecated alias" 0 "[Deprecated] dist.ddp is deprecated; use dist.torchrun instead." -- "$TORCHX" run --dryrun dist.ddp -j 1x1 --script train.py
check "ddp dry run" 0 "--nnodes 2 --nproc_per_node 2" -- "$TORCHX" run --dryrun dist.ddp -j 2x2 --script train.py
check "-cfg accepted before the component" 0 "=== APPLICATION ===" -- "$TORCHX" run --dryrun -cfg log_dir=/tmp utils.echo
check "workspace options are checked before building" 2 "Required run option: queue" -- "$TORCHX" run --dryrun -s kubernetes --workspace "$TMP" -cfg image_repo=r.example.com/x utils.echo
check "-cfg accepted after --workspace" 2 "needs the run option \`image_repo\`" -- "$TORCHX" run --dryrun -s kubernetes --workspace "$TMP" -cfg queue=q utils.echo
check "unknown component suggests" 2 "Did you mean \`dist.ddp\`?" -- "$TORCHX" run --dryrun dist.dpp
check "script option before -- is refused" 2 "after \`--\`" -- "$TORCHX" run --dryrun dist.ddp --script t.py --epochs 3
check "script args after --" 0 "train.py --epochs 3" -- "$TORCHX" run --dryrun dist.ddp --script train.py -- --epochs 3
check "bad -j" 2 "-j: invalid format" -- "$TORCHX" run --dryrun dist.ddp --script t.py -j 2x
check "missing required" 2 "required: --file" -- "$TORCHX" run --dryrun utils.touch
check "repeated option" 2 "repeated command line argument --msg" -- "$TORCHX" run --dryrun utils.echo --msg a --msg b
check "wrong type" 2 "--num_replicas: invalid int value 'two'" -- "$TORCHX" run --dryrun utils.echo --num_replicas two
check "missing python component file" 2 "no such file" -- "$TORCHX" run --dryrun ./comp.py:trainer
check "python components without python" 1 "need a Python interpreter" -- env TORCHX_PYTHON=/nonexistent/python3 "$TORCHX" run --dryrun ./comp.py:trainer
# An interpreter that cannot import the package (a source build without `pip install .`): listing
# schedulers stays quiet (no Python "Error while finding module specification"), and `plugins`
# says why there are no Python plugins.
printf '#!/bin/sh\nexec python3 -I -S "$@"\n' > "$TMP/bare-python3"
chmod +x "$TMP/bare-python3"
bare_out=$(env TORCHX_PYTHON="$TMP/bare-python3" "$TORCHX" runopts 2>&1)
if [[ "$bare_out" == *"local_cwd:"* && "$bare_out" != *"finding module"* && "$bare_out" != *"Traceback"* ]]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: runopts with a bare interpreter is not quiet:"; echo "$bare_out" | head -5
fi
check "plugins says why Python plugins are missing" 0 "cannot import (install it with" -- env TORCHX_PYTHON="$TMP/bare-python3" "$TORCHX" plugins

# plugins
echo "not a shared library" > "$TMP/bogus.so"
check "plugins report" 0 "torchx.schedulers (scheduler)" -- "$TORCHX" plugins
check "plugins report lists devices" 0 "CUDA" -- "$TORCHX" plugins --type device
check "plugins bad type lists choices" 2 "[scheduler, tracker, named_resource, component, device]" -- "$TORCHX" plugins --type widget
check "plugins json" 0 '"errors"' -- "$TORCHX" plugins --json
check "a broken native plugin is reported, not fatal" 0 "[dlopen]" -- env TORCHX_PLUGIN_PATH="$TMP/bogus.so" "$TORCHX" plugins
check "ddp -j auto without PJRT_DEVICE" 2 "set PJRT_DEVICE" -- env -u PJRT_DEVICE "$TORCHX" run --dryrun dist.ddp -j 1xauto --script t.py

# declarative component file + .torchxconfig defaults
cat > "$TMP/train.yaml" <<'YAML'
description: Trains a model.
params:
  script: {help: the training script}
  lr: {type: float, default: 0.1, help: learning rate}
app:
  name: train
  roles:
    - name: trainer
      entrypoint: python
      args: ["{{ script }}", "--lr={{ lr }}"]
      resource: cpu.small
YAML
check "declarative --help" 0 "learning rate (default: 0.1)" -- "$TORCHX" run "$TMP/train.yaml" --help
check "declarative run" 0 '"--lr=0.5"' -- "$TORCHX" run --dryrun "$TMP/train.yaml" --script t.py --lr 0.5
check "declarative missing param" 2 "required: --script" -- "$TORCHX" run --dryrun "$TMP/train.yaml"
printf '[component:%s]\nscript = from_config.py\n[component:utils.echo]\nmsg = configured\n' "$TMP/train.yaml" > "$TMP/cfg"
check "config default fills required" 0 '"from_config.py"' -- env TORCHXCONFIG="$TMP/cfg" "$TORCHX" run --dryrun "$TMP/train.yaml"
check "config default for builtin" 0 '"configured"' -- env TORCHXCONFIG="$TMP/cfg" "$TORCHX" run --dryrun utils.echo
printf '[torchx:tracker]\nfsspec =\n[tracker:fsspec]\nconfig = file:///runs\n' > "$TMP/trackers"
check "[torchx:tracker] names the trackers jobs set up" 0 '"TORCHX_TRACKERS": "fsspec"' -- env TORCHXCONFIG="$TMP/trackers" "$TORCHX" run --dryrun utils.echo
check "[tracker:<name>] config reaches the job" 0 '"TORCHX_TRACKER_FSSPEC_CONFIG": "file:///runs"' -- env TORCHXCONFIG="$TMP/trackers" "$TORCHX" run --dryrun utils.echo
check "\$TORCHX_TRACKERS wins over the config" 0 '"TORCHX_TRACKERS": "a,b"' -- env TORCHXCONFIG="$TMP/trackers" TORCHX_TRACKERS=a,b,a "$TORCHX" run --dryrun utils.echo
check "[tracker:<name>] config also serves names from \$TORCHX_TRACKERS" 0 '"TORCHX_TRACKER_FSSPEC_CONFIG": "file:///runs"' -- env TORCHXCONFIG="$TMP/trackers" TORCHX_TRACKERS=fsspec "$TORCHX" run --dryrun utils.echo
check "run --parent_run_id" 0 '"TORCHX_PARENT_RUN_ID": "exp-1"' -- "$TORCHX" run --dryrun --parent_run_id exp-1 utils.echo
check "\$TORCHX_PARENT_RUN_ID wins over --parent_run_id" 0 '"TORCHX_PARENT_RUN_ID": "from-env"' -- env TORCHX_PARENT_RUN_ID=from-env "$TORCHX" run --dryrun --parent_run_id exp-1 utils.echo
check "missing TORCHXCONFIG file" 2 "TORCHXCONFIG=" -- env TORCHXCONFIG="$TMP/none" "$TORCHX" run --dryrun utils.echo

# local scheduler: components that run helper apps really run (needs the Python package, which
# scripts/install-deps.sh installs)
export TORCHX_STATE_DIR="$TMP/state"
check "booth runs to SUCCEEDED" 0 "local_cwd://torchx/torchx-utils-booth-" -- "$TORCHX" run --wait utils.booth --x1 1 --x2 3 --trial_idx 2 --tracker_base "$TMP/tracker"
check "booth wrote its tracker result" 0 '"booth_eval": 0.0' -- cat "$TMP/tracker/2"
printf 'payload' > "$TMP/src.txt"
check "copy runs" 0 "" -- "$TORCHX" run --wait utils.copy --src "$TMP/src.txt" --dst "$TMP/out/dst.txt"
check "copy copied" 0 "payload" -- cat "$TMP/out/dst.txt"
H=$("$TORCHX" run utils.sh sleep 30)
check "status of a running app" 0 "State: RUNNING" -- "$TORCHX" status "$H"
check "status --json" 0 '"state": "RUNNING"' -- "$TORCHX" status --json "$H"
check "status --json has torchx-nightly's keys" 0 "ok" -- bash -c "'$TORCHX' status --json '$H' | python3 -c 'import json,sys; d=json.load(sys.stdin); want={\"handle\",\"app_id\",\"scheduler\",\"state\",\"num_restarts\",\"roles\",\"msg\",\"structured_error_msg\",\"url\",\"ui_url\"}; print(\"ok\" if want <= set(d) and d[\"handle\"].endswith(d[\"app_id\"]) else sorted(d))'"
check "cancel" 0 "cancel requested" -- "$TORCHX" cancel "$H"
check "wait after cancel" 1 "" -- "$TORCHX" run --wait utils.sh false
check "a failed --wait shows the failed replica's last stderr lines" 1 "sh/0 failed; the last 2 lines of its stderr:
    first problem
    ValueError: the real reason" -- "$TORCHX" run --wait utils.sh sh -c "echo noise; echo 'first problem' >&2; echo 'ValueError: the real reason' >&2; exit 3"
HF=$("$TORCHX" run --wait utils.sh sh -c "echo 'why it broke' >&2; exit 4" 2>/dev/null)
check "cancel of an ended app says so" 0 "already ended (FAILED); nothing to cancel" -- "$TORCHX" cancel "$HF"
check "status of a failed app shows why" 0 "sh/0 failed; the last 1 line of its stderr:
    why it broke" -- "$TORCHX" status "$HF"
check "status --json of a failed app has failure_logs" 0 '"lines": [
        "why it broke"' -- "$TORCHX" status --json "$HF"
HL=$("$TORCHX" run --wait utils.sh sh -c 'for i in 1 2 3 4 5; do echo "line $i"; done' 2>/dev/null)
check "log --lines keeps the last N" 0 "sh/0 line 4
sh/0 line 5" -- "$TORCHX" log --lines 2 "$HL"
check "log -n 2 prints two lines" 0 "two" -- bash -c "[ \$('$TORCHX' log -n 2 '$HL' | wc -l) -eq 2 ] && echo two"
check "log --since on local_cwd, whose lines carry no time, is refused naming who can" 2 "scheduler \`local_cwd\` keeps no time per log line, so it cannot choose lines by time; schedulers that can: " -- "$TORCHX" log --since 10m "$HL"
check "log --until too" 2 "local_docker" -- "$TORCHX" log --until 2999-01-01T00:00:00 "$HL"
check "log --driver of an app that is not a composite names those that are" 2 "has no driver log: only a composite app has one (an app of scheduler " -- "$TORCHX" log --driver "$HL"
check "log --since refuses nan" 2 "give epoch seconds" -- "$TORCHX" log --since nan "$HL"
check "log --since refuses what it cannot read" 2 "give epoch seconds, a time such as" -- "$TORCHX" log --since yesterday "$HL"
check "status --resources shows the sampled figures or why there are none" 0 "REPLICA" -- "$TORCHX" status --resources "$HL"
check "top of an ended app prints once and exits" 0 "CPU HISTORY" -- "$TORCHX" top "$HL"
check "list shows apps" 0 "APP HANDLE" -- "$TORCHX" list
check "list shows when, how long, who and why" 0 "STARTED              DURATION" -- "$TORCHX" list
check "list --state failed keeps the failed ones, with the reason" 0 "sh/0 exited with code" -- "$TORCHX" list --state failed
check "list --state refuses an unknown state" 2 "must be one of [UNSUBMITTED" -- "$TORCHX" list --state bogus
check "list --limit 1 --json is one app with its history keys" 0 "ok" -- bash -c "'$TORCHX' list --limit 1 --json | python3 -c 'import json,sys; a=json.load(sys.stdin); print(\"ok\" if len(a)==1 and {\"created\",\"ended\",\"user\",\"reason\"} <= set(a[0]) else a)'"
check "list --since in the future lists none" 0 "--------" -- "$TORCHX" list --since 2999-01-01T00:00:00
check "unknown app" 1 "does not exist or has been removed from local_cwd's data plane" -- "$TORCHX" status local_cwd://torchx/nope-1
check "malformed handle" 2 "is not of the form" -- "$TORCHX" status nope
check "log replica id out of range" 2 "out of range" -- "$TORCHX" log "$H/sh/99999999999"
# Hostile identifiers: 100,000 characters (Linux takes up to 128 KiB per argument) and 10,000
# '(' are refused with one line and exit 2 by every verb that takes a handle.
HUGE=$(python3 -c 'print("a" * 100000)'); PARENS=$(python3 -c 'print("(" * 10000)')
for verb in log status describe cancel; do
  check "$verb of a 100,000-character handle" 2 "over the limit of 4096 bytes" -- "$TORCHX" $verb "local_cwd://torchx/$HUGE"
  check "$verb of a 100,000-character bare id" 2 "over the limit of 4096 bytes" -- "$TORCHX" $verb "$HUGE"
  check "$verb of 10,000 parentheses" 2 "over the limit of 4096 bytes" -- "$TORCHX" $verb "$PARENS"
  check "$verb of 4,000 parentheses" 2 "is not of the form" -- "$TORCHX" $verb "${PARENS:0:4000}"
done
check "log of a handle with an empty role" 2 "is not of the form" -- "$TORCHX" log "$H//0"
# Sweep values no trial could take are refused by a run and a dry run alike, naming the parameter.
for dry in "" --dryrun; do
  check "sweep run $dry: a parameter given twice" 2 "space.parameters.x: given twice" -- "$TORCHX" sweep run $dry -p x=1 -p x=2 utils.sh echo "@{x}"
  check "sweep run $dry: randint past 2^53" 2 "-p x=randint(0,9223372036854775806): randint(0, 9223372036854775808) is wider than 2^53" -- "$TORCHX" sweep run $dry --trials 2 -p "x=randint(0,9223372036854775806)" utils.sh echo "@{x}"
  check "sweep run $dry: a uniform of infinite width" 2 "is not a finite number" -- "$TORCHX" sweep run $dry --trials 2 -p "x=uniform(-1.79e308,1.79e308)" utils.sh echo "@{x}"
done
# The flags' 0 is "no limit" (a file's own limits start at 1): over a file's max_parallel too.
printf 'component: utils.echo\nargs: [--msg, "@{m}"]\nmax_parallel: 1\nspace: {parameters: {m: [a, b]}}\n' > "$TMP/limits.yaml"
check "sweep run --max_parallel 0 over a file's 1" 0 "2 trials, all at once" -- "$TORCHX" sweep run --dryrun --max_parallel 0 --max_failures 0 "$TMP/limits.yaml"
check "sweep run --max_parallel -1" 2 "max_parallel" -- "$TORCHX" sweep run --dryrun --max_parallel=-1 -p m=a utils.echo --msg "@{m}"
check "log of replica ids that are not digits" 2 "is not of the form" -- "$TORCHX" log "$H/sh/0,x"
check "log of replica ids with an empty one" 2 "is not of the form" -- "$TORCHX" log "$H/sh/0,,1"
check "absurd replica count is refused" 2 "the local scheduler can run at most" -- "$TORCHX" run --dryrun utils.echo --num_replicas 2000000000
check "log of unknown role" 1 "roles: [sh]" -- "$TORCHX" log "$H/nope"
check "log with a bad regex names it" 2 "regex: invalid pattern '('" -- "$TORCHX" log --regex '(' "$H"
check "runopts" 0 "auto_set_cuda_visible_devices" -- "$TORCHX" runopts local_cwd
check "configure --print" 0 "[local_cwd]" -- "$TORCHX" configure --print -a
mkdir -p "$TMP/conf" && printf '[local_cwd]\nlog_dir = /mine\n' > "$TMP/conf/.torchxconfig"
check "configure keeps the file it replaces and says where" 0 "the previous one is kept as ./.torchxconfig.bak" -- bash -c "cd '$TMP/conf' && '$TORCHX' configure"
check "the kept file is the old one" 0 "log_dir = /mine" -- cat "$TMP/conf/.torchxconfig.bak"
check "a second configure keeps both" 0 ".torchxconfig.bak.1" -- bash -c "cd '$TMP/conf' && '$TORCHX' configure"
check "unknown -cfg option is refused with a suggestion" 2 "Did you mean \`log_dir\`?" -- "$TORCHX" run --dryrun -cfg log_dirr=/tmp utils.echo
check "a resource_interval that is not a finite time is refused" 2 "resource_interval: must be a finite number >= 0 seconds" -- "$TORCHX" run --dryrun -cfg resource_interval=nan utils.echo
check "an infinite kill grace is refused" 2 "kill_grace_seconds: must be a finite number >= 0, got inf" -- "$TORCHX" run --dryrun -cfg kill_grace_seconds=inf utils.echo
check "bad -cfg value names the option" 2 "option kill_grace_seconds: invalid float value 'soon'" -- "$TORCHX" run --dryrun -cfg kill_grace_seconds=soon utils.echo
check "non-tty --wait prints plain state lines" 0 "torchx:   echo/0 SUCCEEDED" -- "$TORCHX" run --wait utils.echo

# a live per-replica display when stderr is a terminal (script(1) provides a pseudo-terminal)
if command -v script >/dev/null; then
  tty_out=$(script -qefc "$TORCHX run --wait utils.echo --num_replicas 2" /dev/null 2>&1)
  if [[ "$tty_out" == *$'\033['*"echo/1"*"SUCCEEDED"* ]]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: no live display on a terminal:"; echo "$tty_out" | cat -v | head; fi
  # States are coloured on a terminal (FAILED red), not with NO_COLOR, never when piped.
  tty_list=$(script -qefc "$TORCHX list --state FAILED" /dev/null 2>&1)
  if [[ "$tty_list" == *$'\033[31mFAILED\033[0m'* ]]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: no colour on a terminal:"; echo "$tty_list" | cat -v | head -3; fi
  plain=$(NO_COLOR=1 script -qefc "$TORCHX list --state FAILED" /dev/null 2>&1)
  if [[ "$plain" != *$'\033['* && "$plain" == *FAILED* ]]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: colour despite NO_COLOR:"; echo "$plain" | cat -v | head -3; fi
fi
# Shell completion: the bash script, driven as bash's completion would, with this torchx on PATH.
mkdir -p "$TMP/bin" && ln -sf "$TORCHX" "$TMP/bin/torchx"
complete_words() {  # complete_words WORD... : what bash would offer for the last word
  PATH="$TMP/bin:$PATH" bash -c 'eval "$(torchx completion bash)"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _torchx; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
check "completion: verbs" 0 "status" -- complete_words torchx sta
check "completion: components after run" 0 "dist.torchrun" -- complete_words torchx run dist.t
check "completion: schedulers after -s" 0 "local_docker" -- complete_words torchx run -s local_d
check "completion: handles from the store" 0 "$H" -- complete_words torchx status ""
check "completion: zsh loads the bash function through bashcompinit" 0 "bashcompinit" -- "$TORCHX" completion zsh
check "completion: fish" 0 "__fish_use_subcommand" -- "$TORCHX" completion fish
check "completion: an unknown shell names the choices" 2 "tcsh not in {bash,zsh,fish}" -- "$TORCHX" completion tcsh
check "list is not coloured when piped" 0 "" -- bash -c "! '$TORCHX' list | grep -q \$'\\033'"
check "describe prints YAML" 0 "entrypoint: sh" -- "$TORCHX" describe "$H"
check "describe --native prints the supervisor's plan" 0 "cmd: sh -c 'sleep 30'" -- "$TORCHX" describe --native "$H"
check "describe --native --json is the plan's JSON" 0 '"replicas":' -- "$TORCHX" describe --native --json "$H"
check "describe --native of an unknown app" 1 "does not exist" -- "$TORCHX" describe --native local_cwd://torchx/nope-1
H2=$("$TORCHX" run --wait utils.echo --msg json-line 2>/dev/null)
check "log --json" 0 '{"line":"json-line","replica":0,"role":"echo"}' -- "$TORCHX" log --json "$H2"
check "delete an ended app" 0 "" -- "$TORCHX" delete "$H2"

# run --json: one JSON object on stdout with torchx-nightly's keys (narration and logs on stderr)
json_check() {  # json_check <golden case> <want rc> -- torchx run args...
  local case=$1 want_rc=$2 out rc
  shift 3
  out=$("$TORCHX" run --json "$@" 2>/dev/null)
  rc=$?
  if [[ $rc -eq $want_rc ]] && printf '%s\n' "$out" | python3 "$SRC/tests/e2e/run_json_check.py" "$case"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: run --json $case: rc=$rc (want $want_rc): $out"
  fi
}
json_check dryrun 0 -- --dryrun -s local_cwd utils.echo --msg hi
json_check submitted 0 -- --wait -s local_cwd utils.echo --msg hi
json_check failed 1 -- --log -s local_cwd utils.sh sh -c 'exit 3'
check "run --json --log sends the logs to stderr" 0 "echo/0 to-stderr" -- bash -c "'$TORCHX' run --json --log utils.echo --msg to-stderr 2>&1 >/dev/null"
check "status after delete" 1 "does not exist" -- "$TORCHX" status "$H2"
(cd "$TMP" && "$TORCHX" configure -a >/dev/null 2>&1)
check "configure writes ./.torchxconfig" 0 "kill_grace_seconds = 10.0" -- cat "$TMP/.torchxconfig"
check "configured file is read back" 0 "=== APPLICATION ===" -- bash -c "cd '$TMP' && '$TORCHX' run --dryrun utils.echo"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
