#!/bin/bash
# `make check`: checkpatch --strict over the kernel series, the series
# compiled patch by patch and in the configurations it must not break
# (kernel.sh compile-check), shellcheck over every script, and a -Werror
# build of all C. Prints each problem; exits non-zero if there is any.
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$RSSLIM_TOP"
problems=0

"$RSSLIM_TOP/harness/kernel.sh" tree
mapfile -t patches < <(series_patches)
if [ "${#patches[@]}" -gt 0 ]; then
	log "checkpatch --strict on ${#patches[@]} patches"
	for p in "${patches[@]}"; do
		# On stdin: checkpatch checks a file git tracks as a source file, not a patch.
		out=$(perl "$KERNEL_SRC/scripts/checkpatch.pl" --strict --no-tree --terse - <"$p" 2>&1) || true
		if grep -qE 'ERROR|WARNING|CHECK' <<<"$out"; then
			echo "$out" | grep -E 'ERROR|WARNING|CHECK'
			# A warning may stay when its part's cover letter justifies it ("- NNNN: ...").
			num=$(basename "$p" | cut -c1-4)
			if grep -q "^- $num: " "$(dirname "$p")/0000-cover-letter.patch" 2>/dev/null; then
				log "$(basename "$p"): remaining checkpatch output is justified in the cover letter"
			else
				problems=$((problems + 1))
			fi
		fi
	done
fi

"$RSSLIM_TOP/harness/kernel.sh" compile-check || problems=$((problems + 1))

log "shellcheck"
mapfile -t scripts < <(git ls-files '*.sh' harness/guest/init .ci/run)
shellcheck -x "${scripts[@]}" || problems=$((problems + 1))

log "C with -Werror"
make --no-print-directory -B workloads host-tests guest-tests >/dev/null || problems=$((problems + 1))

if [ "$problems" -gt 0 ]; then
	echo "make check: $problems problem(s)" >&2
	exit 1
fi
log "make check: clean"
