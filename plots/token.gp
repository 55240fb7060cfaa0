# Figure 4: who held the swap token over time, one panel per scenario
# (none, a process outside the scenario's roles, the victim, the hog(s)).
# Variables: dirs, labels, out, fmt.
n = words(dirs)
cols = (n > 2 ? 2 : n)
rows = int((n + cols - 1) / cols)
w = 560 * cols
h = 220 * rows + 60
load "plots/common.gp"
set multiplot layout rows, cols title "Swap-token holder over time (sampled every 100 ms)"
set xlabel "time (s)"
set ytics ("none" 0, "other" 1, "victim" 2, "hog" 3, "hog2" 4)
set yrange [-0.5:4.5]
unset key
holder(file) = "< awk -F'\t' 'NR > 1 { t = $1; if (!(t in seen)) { seen[t] = 1; order[++n] = t; tok[t] = $10 }" . \
	" if ($10 == $3) who[t] = $2 } END { for (i = 1; i <= n; i++) { t = order[i];" . \
	" y = tok[t] <= 0 ? 0 : who[t] == \"victim\" ? 2 : who[t] == \"hog\" ? 3 : who[t] == \"hog2\" ? 4 : 1;" . \
	" print t / 1000 \"\\t\" y } }' " . file
do for [i = 1:n] {
	set title word(labels, i) noenhanced
	plot holder(word(dirs, i) . "/samples.tsv") using 1:2 with steps lw 2 lc rgb "#2ca02c"
}
unset multiplot
