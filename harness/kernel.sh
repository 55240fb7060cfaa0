#!/bin/bash
# Kernel tree and build: Debian's linux-source-6.12 extracted into build/linux
# as a git repository, kernel-patch/series applied with `git am`, config
# fragments merged onto tinyconfig, bzImage built out of tree with ccache.
# The stock flavour builds the same tree and config with no patch applied (a
# git worktree of the base tag in build/linux-stock): "today's Linux".
#
#   kernel.sh build [FLAVOR]   tree + config + bzImage (FLAVOR: default | debug | stock |
#                              parts-1[-N...]: only those parts of the series)
#   kernel.sh tree [parts-...] extract and apply the series only (or those parts, in
#                              build/linux-parts)
#   kernel.sh export           write the tree's commits back to kernel-patch/
#   kernel.sh path [FLAVOR]    print the bzImage path
#   kernel.sh compile-check    compile the series patch by patch and in the
#                              configurations it must not break (make check)
set -euo pipefail
# shellcheck source=harness/lib.sh
. "$(dirname "$0")/lib.sh"

PATCH_DIR=$RSSLIM_TOP/kernel-patch
BASE_TAG=rsslim-base
SOURCE_STAMP=$KERNEL_SRC/.git/rsslim-source
APPLIED_STAMP=$KERNEL_SRC/.git/rsslim-applied
STOCK_SRC=$BUILD_DIR/linux-stock

git_tree() { git -C "$KERNEL_SRC" "$@"; }

source_id() {
	[ -f "$KERNEL_TARBALL" ] ||
		die "missing $KERNEL_TARBALL: install it with 'apt-get install linux-source-6.12' (make deps does)"
	stat -c '%s %Y' "$KERNEL_TARBALL"
}

series_id() {
	local patches
	mapfile -t patches < <(series_patches)
	for p in "${patches[@]}"; do
		[ -f "$p" ] || die "kernel-patch/series names $(basename "$p"), which does not exist"
	done
	hash_files "$PATCH_DIR/series" "${patches[@]}"
}

# Apply the series on top of the base tag in the tree at $1. On failure the
# tree is put back where it was and the reason is printed.
apply_series() {
	local tree=$1 old_head patches
	mapfile -t patches < <(series_patches)
	old_head=$(git -C "$tree" rev-parse HEAD)
	git -C "$tree" reset -q --hard "$BASE_TAG"
	[ "${#patches[@]}" -eq 0 ] && return 0
	if ! git -C "$tree" am -q --whitespace=nowarn "${patches[@]}" >"$BUILD_DIR/git-am.log" 2>&1; then
		local failed
		failed=$(sed -n 's/^Patch failed at [0-9]* \(.*\)/\1/p' "$BUILD_DIR/git-am.log" | head -1)
		git -C "$tree" am --abort >/dev/null 2>&1 || true
		git -C "$tree" reset -q --hard "$old_head"
		die "kernel-patch/series does not apply to linux-source-6.12 (${failed:-see $BUILD_DIR/git-am.log}); tree left as it was"
	fi
}

# Refuse to throw away kernel work that is not in kernel-patch/ yet.
check_tree_exported() {
	local recorded
	recorded=$(cut -d' ' -f2 "$APPLIED_STAMP" 2>/dev/null || true)
	if [ -n "$(git_tree status --porcelain --untracked-files=no)" ]; then
		die "build/linux has uncommitted changes: commit them and run 'make kernel-patches', or revert them"
	fi
	if [ "$(git_tree rev-parse HEAD)" != "$recorded" ]; then
		die "build/linux has commits that are not in kernel-patch/: run 'make kernel-patches' first"
	fi
}

extract_tree() {
	local new=$BUILD_DIR/linux.new
	need_disk_mib "$BUILD_DIR" 3000
	rm -rf "$new"
	mkdir -p "$new"
	timed "extracting $(basename "$KERNEL_TARBALL")" \
		tar -xf "$KERNEL_TARBALL" -C "$new" --strip-components=1
	# shellcheck disable=SC2016 # expanded by the inner shell
	timed "recording the pristine tree as git base" sh -c '
		cd "$1" && git init -q && git config user.name "rsslim developers" &&
		git config user.email dev@rsslim.invalid && git config gc.auto 0 &&
		{ [ ! -f .gitignore ] || sed -i "/^# Debian packaging: ignore everything/,\$d" .gitignore; } &&
		git add -A && git commit -q -m "linux-source-6.12 as shipped by Debian (minus its packaging-only top-level ignore rule)" &&
		git tag "$2"' sh "$new" "$BASE_TAG"
	apply_series "$new"
	source_id >"$new/.git/rsslim-source"
	echo "$(series_id) $(git -C "$new" rev-parse HEAD)" >"$new/.git/rsslim-applied"
	if [ -d "$KERNEL_SRC" ]; then
		check_tree_exported
		rm -rf "$KERNEL_SRC"
	fi
	mv "$new" "$KERNEL_SRC"
}

ensure_tree() {
	local want_series
	source_id >/dev/null
	mkdir -p "$BUILD_DIR"
	if [ ! -d "$KERNEL_SRC/.git" ] || [ "$(cat "$SOURCE_STAMP" 2>/dev/null)" != "$(source_id)" ]; then
		extract_tree
		return
	fi
	want_series=$(series_id)
	if [ "$(cut -d' ' -f1 "$APPLIED_STAMP" 2>/dev/null)" != "$want_series" ]; then
		check_tree_exported
		timed "applying kernel-patch/series" apply_series "$KERNEL_SRC"
		echo "$want_series $(git_tree rev-parse HEAD)" >"$APPLIED_STAMP"
	fi
}

# The pristine tree, checked out beside the patched one and sharing its git
# objects, so ccache sees the same sources for every file the series leaves
# alone.
ensure_stock_tree() {
	ensure_tree
	[ "$(git -C "$STOCK_SRC" rev-parse HEAD 2>/dev/null)" = "$(git_tree rev-parse "$BASE_TAG")" ] &&
		[ -z "$(git -C "$STOCK_SRC" status --porcelain --untracked-files=no)" ] && return 0
	rm -rf "$STOCK_SRC"
	git_tree worktree prune
	git_tree worktree add -q --detach "$STOCK_SRC" "$BASE_TAG"
}

# The flavour parts-1-3 (say) is the series' first part and its third
# alone, as a maintainer who took those two would build it: a worktree
# beside the patched tree, the first part checked out and the others
# applied with plain git am. Remade only when the series or the choice
# changes, so that an unchanged choice is not rebuilt.
PARTS_SRC=$BUILD_DIR/linux-parts

ensure_parts_tree() {
	local flavor=$1 want n failed
	local -a parts chosen
	ensure_tree
	IFS=- read -ra chosen <<<"${flavor#parts-}"
	mapfile -t parts < <(part_names)
	[ "${chosen[0]:-}" = 1 ] || die "kernel flavour $flavor: the parts chosen must start with 1, the one the others build on"
	for n in "${chosen[@]}"; do
		if ! [[ $n =~ ^[1-9][0-9]*$ ]] || [ "$n" -gt "${#parts[@]}" ]; then
			die "kernel flavour $flavor: the series has parts 1-${#parts[@]}"
		fi
	done
	want="$(series_id) $flavor"
	[ "$(cat "$PARTS_SRC/.rsslim-parts" 2>/dev/null)" = "$want" ] &&
		[ -z "$(git -C "$PARTS_SRC" status --porcelain --untracked-files=no)" ] && return 0
	rm -rf "$PARTS_SRC"
	git_tree worktree prune
	git_tree worktree add -q --detach "$PARTS_SRC" "$(first_part_tip)"
	for n in "${chosen[@]:1}"; do
		failed=$(apply_part "$PARTS_SRC" "${parts[n - 1]}") ||
			die "kernel flavour $flavor: ${parts[n - 1]} does not apply on the parts before it ($failed)"
	done
	echo "$want" >"$PARTS_SRC/.rsslim-parts"
}

flavor_src() {
	case $1 in
	stock) echo "$STOCK_SRC" ;;
	parts-*) echo "$PARTS_SRC" ;;
	*) echo "$KERNEL_SRC" ;;
	esac
}

flavor_fragments() {
	local flavor=$1
	echo "$PATCH_DIR/rsslim.config"
	case $flavor in
	default) ;;
	debug) echo "$PATCH_DIR/debug.config" ;;
	stock) echo "$PATCH_DIR/stock.config" ;;
	parts-*) ;;
	*) die "unknown kernel flavor '$flavor' (default, debug, stock or parts-1[-N...])" ;;
	esac
}

obj_dir() { echo "$BUILD_DIR/obj-$1"; }

kmake() {
	local src=$1 obj=$2
	shift 2
	make -C "$src" O="$obj" ARCH="${KMAKE_ARCH:-$KERNEL_ARCH}" CC="ccache gcc" HOSTCC="ccache gcc" \
		KBUILD_BUILD_USER=rsslim KBUILD_BUILD_HOST=rsslim \
		KBUILD_BUILD_TIMESTAMP="$(git -C "$src" log -1 --format=%cd)" "$@"
}

ensure_config() {
	local flavor=$1 src obj frags stamp want missing
	src=$(flavor_src "$flavor")
	obj=$(obj_dir "$flavor")
	mapfile -t frags < <(flavor_fragments "$flavor")
	for f in "${frags[@]}"; do [ -f "$f" ] || die "missing config fragment $f"; done
	want=$(hash_files "${frags[@]}")-$(cut -d' ' -f1 <"$SOURCE_STAMP")
	stamp=$obj/.rsslim-config
	[ -f "$obj/.config" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return 0
	mkdir -p "$obj"
	rm -f "$stamp"
	{
		kmake "$src" "$obj" tinyconfig
		"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${frags[@]}"
		kmake "$src" "$obj" olddefconfig
	} >"$obj/config.log" 2>&1 || die "kernel configuration failed, see $obj/config.log"
	# merge_config only warns when Kconfig drops a value: make that an error.
	# A later fragment overrides an earlier one, so only an option's last
	# value is checked.
	missing=$(cat "${frags[@]}" | grep -E '^CONFIG_[A-Z0-9_]+=' | tac | awk -F= '!seen[$1]++' |
		while IFS= read -r opt; do
			case $opt in
			*=n) grep -qx "# ${opt%=n} is not set" "$obj/.config" || echo "$opt" ;;
			*) grep -qxF "$opt" "$obj/.config" || echo "$opt" ;;
			esac
		done)
	[ -z "$missing" ] || die "config fragment values Kconfig did not keep: $(echo "$missing" | tr '\n' ' ')"
	echo "$want" >"$stamp"
}

build() {
	local flavor=${1:-default} src obj want stamp start
	case $flavor in
	stock) ensure_stock_tree ;;
	parts-*) ensure_parts_tree "$flavor" ;;
	*) ensure_tree ;;
	esac
	ensure_config "$flavor"
	src=$(flavor_src "$flavor")
	obj=$(obj_dir "$flavor")
	want="$(cat "$obj/.rsslim-config") $(git -C "$src" rev-parse HEAD) $(git -C "$src" diff HEAD | sha256sum | cut -c1-16)"
	stamp=$obj/.rsslim-build
	if [ -f "$obj/arch/x86/boot/bzImage" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
		log "kernel ($flavor) is up to date: $obj/arch/x86/boot/bzImage"
		return 0
	fi
	need_disk_mib "$obj" 1000
	rm -f "$stamp"
	log "building the $flavor kernel (log: $obj/build.log) ..."
	start=$(date +%s)
	if ! kmake "$src" "$obj" -j"$(nproc)" bzImage >"$obj/build.log" 2>&1; then
		grep -E 'error|Error|No space' "$obj/build.log" | head -20 >&2 || true
		df -Pm "$obj" | awk 'NR == 2 && $4 < 200 { print "error: the disk is full (" $4 " MiB free)" }' >&2
		die "kernel build failed, see $obj/build.log"
	fi
	echo "$want" >"$stamp"
	log "kernel $(cat "$obj/include/config/kernel.release") built in $(($(date +%s) - start)) s: $obj/arch/x86/boot/bzImage"
}

# The series is posted as parts, each a directory of kernel-patch/ with its
# own cover letter (0000-cover-letter.patch) and numbering, for a maintainer
# to take or leave apart; kernel-patch/series lists every patch in the order
# they apply. "PART<TAB>SUBJECT" for each patch the series names.
series_parts() {
	local p
	while IFS= read -r p; do
		[ -f "$p" ] || continue
		printf '%s\t%s\n' "$(dirname "${p#"$PATCH_DIR"/}")" \
			"$(git mailinfo /dev/null /dev/null <"$p" | sed -n 's/^Subject: //p')"
	done < <(series_patches)
}

# The parts, in order, one per line.
part_names() { series_parts | cut -f1 | uniq; }

# The commit of build/linux where the first part ends.
first_part_tip() {
	local n
	n=$(series_parts | cut -f1 | grep -cxF "$(part_names | head -1)")
	git_tree rev-list --reverse "$BASE_TAG..HEAD" | sed -n "${n}p"
}

# apply_part TREE PART: git am PART's patches onto TREE's HEAD. On failure the
# tree is left as it was and the patch that failed (or the log) is printed.
apply_part() {
	local tree=$1 part=$2 log=$BUILD_DIR/git-am-part.log failed
	local -a files
	mapfile -t files < <(series_patches | grep -F "/$part/")
	git -C "$tree" am -q --whitespace=nowarn "${files[@]}" >"$log" 2>&1 && return 0
	git -C "$tree" am --abort >/dev/null 2>&1 || true
	failed=$(sed -n 's/^Patch failed at [0-9]* \(.*\)/\1/p' "$log" | head -1)
	echo "${failed:-see $log}"
	return 1
}

# Write the tree's commits back as the parts' patch files. A commit keeps
# the part of the patch with its subject; a new one (or a reworded one)
# joins the part of the commit before it, or the first part.
export_patches() {
	local tmp known commits c part subject first_part prev="" n=0 name
	local -a order=() first=() last=()
	[ -d "$KERNEL_SRC/.git" ] || die "no kernel tree in $KERNEL_SRC: run 'make kernel' first"
	[ -z "$(git_tree status --porcelain --untracked-files=no)" ] ||
		die "build/linux has uncommitted changes: commit them first"
	known=$(series_parts)
	first_part=$(head -1 <<<"$known" | cut -f1)
	mapfile -t commits < <(git_tree rev-list --reverse "$BASE_TAG..HEAD")
	for c in "${commits[@]}"; do
		subject=$(git_tree log -1 --format=%s "$c")
		part=$(awk -F '\t' -v s="$subject" '$2 == s { print $1; exit }' <<<"$known")
		[ -n "$part" ] || part=${prev:-${first_part:-.}}
		if [ "$part" != "$prev" ]; then
			for name in "${order[@]}"; do
				[ "$name" != "$part" ] ||
					die "kernel-patch/$part would be split by the commits of another part: reorder build/linux"
			done
			order+=("$part")
			first+=("$c")
		fi
		last[${#order[@]}-1]=$c
		prev=$part
	done
	tmp=$(mktemp -d)
	for part in . $(cut -f1 <<<"$known" | sort -u) "${order[@]}"; do
		[ -d "$PATCH_DIR/$part" ] || continue
		find "$PATCH_DIR/$part" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-*' -delete
	done
	{
		echo "# Patches applied in order with \`git am\` onto the pristine linux-source-6.12 tree."
		echo "# Each directory is one series, with its own cover letter and numbering."
		for n in "${!order[@]}"; do
			part=${order[n]}
			# Blank context lines without their leading space: git am takes them,
			# and checkpatch (which checks a tracked patch as a plain file) does not
			# see trailing whitespace in them.
			git_tree -c diff.suppressBlankEmpty=true format-patch -q --zero-commit --no-signature \
				--subject-prefix="PATCH v2" -o "$tmp/$part" "${first[n]}^..${last[n]}"
			mkdir -p "$PATCH_DIR/$part"
			for c in "$tmp/$part"/*.patch; do
				cp "$c" "$PATCH_DIR/$part/"
				if [ "$part" = . ]; then basename "$c"; else echo "$part/$(basename "$c")"; fi
			done
		done
	} >"$PATCH_DIR/series.new"
	mv "$PATCH_DIR/series.new" "$PATCH_DIR/series"
	rm -rf "$tmp"
	echo "$(series_id) $(git_tree rev-parse HEAD)" >"$APPLIED_STAMP"
	log "exported ${#commits[@]} patches to kernel-patch/ in ${#order[@]} part(s): ${order[*]}"
}

# What a maintainer's build bots would try: the series without each feature
# it hooks into, 32-bit, and each patch on its own (a bisection must never
# land on a patch that does not build). Compile only, no link, with -Werror:
# everything in mm/ and the files the series touches elsewhere. Each entry:
# NAME ARCH CONFIG_OPTION... merged over rsslim.config.
CHECK_CONFIGS=(
	"no-sysctl x86_64 CONFIG_PROC_SYSCTL=n CONFIG_SYSCTL=n"
	"no-swap x86_64 CONFIG_SWAP=n"
	"no-memcg x86_64 CONFIG_MEMCG=n"
	"no-lru-gen x86_64 CONFIG_LRU_GEN=n"
	"no-thp x86_64 CONFIG_TRANSPARENT_HUGEPAGE=n"
	"i386 i386 CONFIG_64BIT=n CONFIG_X86_32=y"
)
CHECK_TARGETS=(mm/ kernel/sys.o kernel/fork.o fs/exec.o fs/proc/task_mmu.o)
CHECK_TREE=$BUILD_DIR/linux-check

# check_compile NAME SRC ARCH [CONFIG_OPTION...]: configure obj-check-NAME
# and compile CHECK_TARGETS in it. Prints what went wrong; non-zero if so.
check_compile() {
	local name=$1 src=$2 arch=$3 obj frag opt
	shift 3
	obj=$(obj_dir "check-$name")
	mkdir -p "$obj"
	frag=$obj/variant.config
	printf '%s\n' CONFIG_WERROR=y "$@" >"$frag"
	if ! {
		KMAKE_ARCH=$arch kmake "$src" "$obj" tinyconfig &&
			"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$PATCH_DIR/rsslim.config" "$frag" &&
			KMAKE_ARCH=$arch kmake "$src" "$obj" olddefconfig
	} >"$obj/config.log" 2>&1; then
		echo "$name: configuration failed, see $obj/config.log"
		return 1
	fi
	for opt in CONFIG_WERROR=y "$@"; do
		case $opt in
		# An option with no prompt in this configuration is left out when n.
		*=n) ! grep -q "^${opt%=n}=" "$obj/.config" ;;
		*) grep -qxF "$opt" "$obj/.config" ;;
		esac || {
			echo "$name: Kconfig did not keep $opt"
			return 1
		}
	done
	if ! KMAKE_ARCH=$arch kmake "$src" "$obj" -j"$(nproc)" "${CHECK_TARGETS[@]}" >"$obj/build.log" 2>&1; then
		echo "$name: does not compile (log: $obj/build.log):"
		grep -E 'error|warning' "$obj/build.log" | head -20
		return 1
	fi
}

# A maintainer may take the first part and a later one without the parts
# between: each part after the second must apply with plain git am, and
# compile, on the first part alone.
parts_apart() {
	local first tip part failed
	local -a parts
	mapfile -t parts < <(part_names)
	first=${parts[0]:-}
	tip=$(first_part_tip)
	for part in "${parts[@]:2}"; do
		git -C "$CHECK_TREE" checkout -q --detach "$tip"
		log "applying $part on $first alone"
		if ! failed=$(apply_part "$CHECK_TREE" "$part"); then
			echo "$part does not apply on $first alone ($failed)"
			return 1
		fi
		check_compile "apart-$part" "$CHECK_TREE" x86_64 || return 1
	done
}

compile_check() {
	local commits c n=0 failed=0 variant
	ensure_tree
	check_tree_exported
	if ! git -C "$CHECK_TREE" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		rm -rf "$CHECK_TREE"
		git_tree worktree prune
		git_tree worktree add -q --detach "$CHECK_TREE" "$BASE_TAG"
	fi
	mapfile -t commits < <(git_tree rev-list --reverse "$BASE_TAG..HEAD")
	for c in "${commits[@]}"; do
		n=$((n + 1))
		git -C "$CHECK_TREE" checkout -q --detach "$c"
		log "compiling patch $n/${#commits[@]}: $(git_tree log -1 --format=%s "$c")"
		check_compile patch-by-patch "$CHECK_TREE" x86_64 || failed=$((failed + 1))
	done
	parts_apart || failed=$((failed + 1))
	for variant in "${CHECK_CONFIGS[@]}"; do
		# shellcheck disable=SC2086 # NAME ARCH OPTION... split on purpose
		set -- $variant
		log "compiling the series: $1"
		check_compile "$1" "$KERNEL_SRC" "${@:2}" || failed=$((failed + 1))
	done
	[ "$failed" -eq 0 ] || die "$failed of $((n + ${#CHECK_CONFIGS[@]})) compile checks failed"
	log "the series compiles patch by patch ($n) and in ${#CHECK_CONFIGS[@]} configurations"
}

cmd=${1:-build}
shift || true
case $cmd in
build) build "$@" ;;
tree)
	case ${1:-} in
	parts-*) ensure_parts_tree "$1" ;;
	'') ensure_tree ;;
	*) die "kernel.sh tree takes no flavour but parts-1[-N...]" ;;
	esac
	;;
export) export_patches ;;
path) echo "$(obj_dir "${1:-default}")/arch/x86/boot/bzImage" ;;
compile-check) compile_check ;;
*) die "usage: kernel.sh build [default|debug|stock|parts-1[-N...]] | tree | export | path [FLAVOR] | compile-check" ;;
esac
