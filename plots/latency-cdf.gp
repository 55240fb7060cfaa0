# Figure 3: distribution of the victim's round latency (CDF, log time axis).
# Variables: dirs, labels, out, fmt, lru.
load "plots/common.gp"
n = words(dirs)
set title "Victim round latency, cumulative distribution (" . lru . ")" noenhanced
set xlabel "round latency (us, log scale)"
set ylabel "fraction of rounds"
set logscale x
set yrange [0:1.02]
plot for [i = 1:n] word(dirs, i) . "/victim_rounds.tsv" using ($2 > 0 ? $2 : 0.1):(1) skip 1 \
	smooth cnormal title word(labels, i) lw 2
