# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Minimal TAP (version 13) library for the selftests, kselftest conventions:
# exit 0 = pass, 1 = fail, 4 = skip (prerequisite missing).
#
#   . "$(dirname "$0")/lib.sh"
#   tap_plan 3
#   t "load module"        load_srdma          # ok when the command succeeds
#   t_fail "rxe refused"   modprobe rdma_rxe   # ok when it fails (not on timeout)
#   t_skip "needs siw"     "siw.ko not built"
#
# Every step runs in its own process group under a timeout ($STEP_TIMEOUT,
# default 60 s) so a hung command fails one line instead of
# stalling the run; its output goes to the log and, on failure, to the TAP
# stream as "# " diagnostics. Steps are shell functions or commands and see
# every variable of the script. If the script dies early, the EXIT trap
# reports the planned-but-unrun tests as failures, so the count never lies.
# Do not `set -e` in a test: a failing step must not end the script.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

SELFTESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=${REPO:-$(cd "$SELFTESTS_DIR/.." && pwd)}
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
# A slower kernel (the debug kernel: KASAN, lockdep) multiplies every time
# limit of a test by SRDMA_TIMEOUT_SCALE: the step timeouts, wait_for, and
# through the function below every `timeout` the scripts run, so that no
# test needs to know which kernel it runs on.
TIMEOUT_SCALE=${SRDMA_TIMEOUT_SCALE:-1}
[[ "$TIMEOUT_SCALE" =~ ^[1-9][0-9]*$ ]] || TIMEOUT_SCALE=1

# timeout [OPTION]... DURATION CMD...: coreutils' timeout, DURATION scaled.
timeout() {
	local args=()
	while [ "$#" -gt 0 ]; do
		case "$1" in
		-k | -s | --kill-after | --signal) args+=("$1" "$2"); shift 2 ;;
		-*) args+=("$1"); shift ;;
		*) break ;;
		esac
	done
	if [ "$TIMEOUT_SCALE" != 1 ] && [[ "${1:-}" =~ ^[0-9]+$ ]]; then
		args+=("$(($1 * TIMEOUT_SCALE))")
		shift
	fi
	command timeout "${args[@]}" "$@"
}
TAP_NAME=$(basename "$0" .sh)
# Per-step output; in a VM it lands on the output share, elsewhere in /tmp.
TAP_LOGDIR=${TAP_LOGDIR:-${VM_OUT:+$VM_OUT/logs/$TAP_NAME}}
TAP_LOGDIR=${TAP_LOGDIR:-$(mktemp -d "/tmp/$TAP_NAME.XXXXXX")}
mkdir -p "$TAP_LOGDIR"

_tap_n=0 _tap_plan=0 _tap_fail=0 _tap_skip=0 _tap_pid=$BASHPID

# Background jobs get their own process group, so a timeout can kill a
# step together with everything it started.
set -m

tap_plan() {
	_tap_plan=$1
	_tap_pid=$BASHPID
	echo "TAP version 13"
	echo "1..$_tap_plan"
	trap _tap_exit EXIT
}

# Nothing can run here (not root, a tool missing): report and exit 4.
tap_skip_all() {
	if [ "$_tap_plan" -eq 0 ]; then
		echo "TAP version 13"
		echo "1..0 # SKIP $*"
		trap - EXIT
		exit "$KSFT_SKIP"
	fi
	while [ "$_tap_n" -lt "$_tap_plan" ]; do
		t_skip "not run" "$*"
	done
	exit
}

tap_require_root() {
	[ "$(id -u)" = 0 ] || tap_skip_all "must run as root"
}

tap_require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" > /dev/null 2>&1 || tap_skip_all "$c not installed"
	done
}

diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

_tap_result() { # ok|not ok, description[, directive]
	_tap_n=$((_tap_n + 1))
	echo "$1 $_tap_n $2${3:+ # $3}"
}

ok() { _tap_result "ok" "$1"; }
not_ok() { _tap_fail=$((_tap_fail + 1)); _tap_result "not ok" "$1"; }
t_skip() { _tap_skip=$((_tap_skip + 1)); _tap_result "ok" "$1" "SKIP $2"; }

# Run "$@" with the step timeout, output to $TAP_LOGDIR/<n>.log.
# Returns the command's status, 124 on timeout.
run_step() {
	local log=$1 pid wd rc
	shift
	( "$@" ) > "$log" 2>&1 < /dev/null &
	pid=$!
	(
		sleep "$((STEP_TIMEOUT * TIMEOUT_SCALE))"
		echo "TIMEOUT after $((STEP_TIMEOUT * TIMEOUT_SCALE))s" >> "$log"
		kill -TERM -- "-$pid" 2> /dev/null
		sleep 5
		kill -KILL -- "-$pid" 2> /dev/null
	) > /dev/null 2>&1 &
	wd=$!
	rc=0
	# (stderr: job control reports a killed step as "Terminated" there)
	wait "$pid" 2> /dev/null || rc=$?
	kill -TERM -- "-$wd" 2> /dev/null
	wait "$wd" 2> /dev/null
	if grep -q '^TIMEOUT after' "$log"; then rc=124; fi
	return "$rc"
}

_step_log() { echo "$TAP_LOGDIR/$((_tap_n + 1)).log"; }

# t DESC CMD...: ok when CMD exits 0.
t() {
	local desc=$1 log rc=0
	shift
	log=$(_step_log)
	run_step "$log" "$@" || rc=$?
	if [ "$rc" = 0 ]; then
		ok "$desc"
	else
		not_ok "$desc"
		diag "command: $* (exit $rc)"
		tail -n 30 "$log" | sed 's/^/#   /'
	fi
	return "$rc"
}

# t_fail DESC CMD...: ok when CMD fails; a timeout is still a failure.
t_fail() {
	local desc=$1 log rc=0
	shift
	log=$(_step_log)
	run_step "$log" "$@" || rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 124 ]; then
		ok "$desc"
		return 0
	fi
	not_ok "$desc"
	diag "command: $* (exit $rc, expected failure)"
	tail -n 30 "$log" | sed 's/^/#   /'
	return 1
}

# tap_bail REASON: a step everything else depends on failed; report the
# remaining planned tests as failures at once instead of letting each one
# run into its timeout.
tap_bail() {
	while [ "$_tap_n" -lt "$_tap_plan" ]; do
		not_ok "not run: $*"
	done
	exit "$KSFT_FAIL"
}

# Poll CMD until it succeeds, at most SECS seconds (for asynchronous state:
# port state after a link change, device removal after netdev unregister).
wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 5 * TIMEOUT_SCALE; i++)); do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.2
	done
	"$@"
}

_tap_exit() {
	local rc=$?
	# Subshells (steps, the timeout watchdog) may inherit this trap when
	# killed early: only the test script itself reports and cleans up.
	[ "$BASHPID" = "$_tap_pid" ] || return "$rc"
	# A test may define tap_cleanup to undo its setup; it runs (with a
	# timeout, output to the log) however the script ends.
	if declare -F tap_cleanup > /dev/null; then
		run_step "$TAP_LOGDIR/cleanup.log" tap_cleanup || diag "cleanup failed (see $TAP_LOGDIR/cleanup.log)"
	fi
	# A step that exited the script (set -e, a bug) must not hide the rest.
	while [ "$_tap_n" -lt "$_tap_plan" ]; do
		not_ok "not run (script ended early, status $rc)"
	done
	if [ "$_tap_n" -gt "$_tap_plan" ]; then
		diag "ran $_tap_n tests but planned $_tap_plan"
		_tap_fail=$((_tap_fail + 1))
	fi
	if [ "$_tap_fail" -gt 0 ]; then
		exit "$KSFT_FAIL"
	elif [ "$_tap_skip" -eq "$_tap_n" ] && [ "$_tap_n" -gt 0 ]; then
		exit "$KSFT_SKIP"
	fi
	exit "$KSFT_PASS"
}
