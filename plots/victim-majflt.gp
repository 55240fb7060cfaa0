# Figure 2: the victim's major faults over time (cumulative), all scenarios
# (the first run of each; the report gives their spread over the repeats).
# Variables: dirs, labels, out, fmt, lru.
load "plots/common.gp"
n = words(dirs)
set title "Victim major faults over time (" . lru . ")" noenhanced
set xlabel "time (s)"
set ylabel "major faults (cumulative)"
set yrange [0:*]
first(d) = real(system("awk -F'\t' '$2 == \"victim\" { print $7; exit }' " . d . "/samples.tsv"))
# The invisible line at 1 keeps the y range non-empty (no gnuplot warning)
# when the victim took no major fault at all.
plot for [i = 1:n] role(word(dirs, i) . "/samples.tsv", "victim") \
	using ($1 / 1000):($7 - first(word(dirs, i))) title word(labels, i) lw 2, \
	1 with lines lc rgb "#ffffff" notitle
