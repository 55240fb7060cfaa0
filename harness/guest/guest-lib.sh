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

# has_part N: the kernel has part N of the series (1 RLIMIT_RSS in reclaim,
# 2 the active and hard modes, 3 the swap token): every part unless the
# command line names some (rsslim.parts=1,3, or none for the stock kernel).
has_part() {
	case ,$(cmdline_value rsslim.parts all), in
	,all, | *,"$1",*) return 0 ;;
	esac
	return 1
}
