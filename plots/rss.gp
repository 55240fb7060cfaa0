# Figure 1: resident memory of the victim and the hog over time, one panel
# per scenario, with the hog's RSS limit as a dashed line. The first run
# in bold; the scenario's other repeats (<name>.r2, .r3, ...) in thin lines.
# Variables: dirs, labels (space-separated, same order), limits (MiB, 0: none), out, fmt.
n = words(dirs)
cols = (n > 3 ? 3 : n)
rows = int((n + cols - 1) / cols)
w = 420 * cols
h = 300 * rows + 60
load "plots/common.gp"
set multiplot layout rows, cols title "Resident memory over time (MiB): victim, hog, and the hog's RSS limit"
set key inside top right nobox
set xlabel "time (s)"
set ylabel "RSS (MiB)"
set yrange [0:*]
color(r) = r eq "victim" ? "#1f77b4" : r eq "hog" ? "#d62728" : "#9467bd"
do for [i = 1:n] {
	d = word(dirs, i)
	lim = word(limits, i) + 0
	set title word(labels, i) noenhanced
	if (lim > 0) { set arrow 1 from graph 0, first lim to graph 1, first lim nohead dt 2 lc rgb "red" } else { unset arrow 1 }
	f = d . "/samples.tsv"
	# Only the roles the scenario has: gnuplot warns about empty data.
	present = system(sprintf("awk -F'\t' 'NR > 1 && $2 ~ /^(victim|hog|hog2)$/ { print $2 }' %s | sort -u | tr '\n' ' '", f))
	others = system(sprintf("case %s in *.r1) ls -d %s.r[2-9] %s.r[1-9][0-9] 2>/dev/null;; esac | while read -r o; do [ -s $o/samples.tsv ] && echo $o/samples.tsv; done | tr '\n' ' '", d, d[1:strlen(d) - 3], d[1:strlen(d) - 3]))
	# A plot iteration over an empty list still runs once (gnuplot 5.4), so
	# the thin lines get their own plot command only when there are some.
	if (words(others) > 0) {
		set title word(labels, i) . sprintf(" (thin: %d more runs)", words(others)) noenhanced
		plot for [r in present] role(f, r) using ($1 / 1000):($5 / 1024) title r lw 2 lc rgb color(r), \
			for [o in others] for [r in present] role(o, r) using ($1 / 1000):($5 / 1024) notitle lw 0.5 lc rgb color(r)
	} else {
		plot for [r in present] role(f, r) using ($1 / 1000):($5 / 1024) title r lw 2 lc rgb color(r)
	}
}
unset multiplot
