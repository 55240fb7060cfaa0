#!/bin/sh
# Helpers shared by the guest scripts (busybox sh). Source it.

# cmdline_value KEY DEFAULT: the value of KEY=value on the kernel command line.
cmdline_value() {
	read -r cmdline </proc/cmdline
	# shellcheck disable=SC2086 # split the command line into words
	for word in $cmdline; do
		case $word in
		"$1"=*) echo "${word#*=}"; return 0 ;;
		esac
	done
	echo "$2"
}
