#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tap-collect.sh LABEL TAPFILE [EXIT_STATUS]
# Normalise one test script's TAP stream into result lines for check.sh:
#   PASS|FAIL|SKIP <tab> LABEL: <n> <description>
# A script that printed no TAP, fewer results than it planned, or exited
# non-zero (other than 4 = skip) without a failing line gets a FAIL line for
# that, so a crash or hang can never pass for success.
set -uo pipefail
label=$1 tap=$2 rc=${3:-}

if [ ! -s "$tap" ]; then
	printf 'FAIL\t%s: no TAP output (exit %s)\n' "$label" "${rc:-?}"
	exit 0
fi
awk -v label="$label" -v rc="$rc" '
	function out(kind, text) { printf "%s\t%s: %s\n", kind, label, text; n[kind]++ }
	/^1\.\.[0-9]+/ {
		plan = $0; sub(/^1\.\./, "", plan); sub(/[^0-9].*/, "", plan); planned = 1
		if (plan == 0) { r = $0; sub(/^1\.\.0 *#? *(SKIP|skip)? */, "", r); out("SKIP", "all skipped: " r) }
		next
	}
	/^(not )?ok( |$)/ {
		res++
		fail = ($0 ~ /^not ok/)
		text = $0; sub(/^(not )?ok */, "", text)
		if (text ~ /#[ \t]*[Ss][Kk][Ii][Pp]/) out("SKIP", text)
		else if (fail && text ~ /#[ \t]*[Tt][Oo][Dd][Oo]/) out("SKIP", text)
		else out(fail ? "FAIL" : "PASS", text)
	}
	END {
		if (!planned) out("FAIL", "no TAP plan line (script died?)")
		else if (res + 0 < plan + 0) out("FAIL", "planned " plan " results, got " res + 0)
		if (rc != "" && rc != 0 && rc != 4 && !n["FAIL"])
			out("FAIL", "exited with status " rc)
	}' "$tap"
