# Figure 3: distribution of the victim's round latency (CDF, log time axis),
# the rounds of all repeats of a scenario pooled, as the report's percentiles.
# Variables: dirs (a scenario's first run, <name>.r1, or its only one),
# labels, out, fmt, lru.
load "plots/common.gp"
n = words(dirs)
set title "Victim round latency, cumulative distribution (" . lru . ")" noenhanced
set xlabel "round latency (us, log scale)"
set ylabel "fraction of rounds"
set logscale x
set yrange [0:1.02]
# All runs of the scenario: <name>.r1 -> <name>.r*.
runs(d) = d[strlen(d) - 2:] eq ".r1" ? d[1:strlen(d) - 1] . "*" : d
rounds(d) = sprintf("< awk 'FNR > 1' %s/victim_rounds.tsv", runs(d))
nruns(d) = int(system(sprintf("ls -d %s | wc -l", runs(d))))
name(l) = l[strlen(l) - 2:] eq ".r1" ? l[1:strlen(l) - 3] : l
legend(i) = name(word(labels, i)) . (nruns(word(dirs, i)) > 1 ? sprintf(" (%d runs)", nruns(word(dirs, i))) : "")
# Dashed after the eighth line, where the colours come round again.
dash_of(i) = i > 8 ? 2 : 1
plot for [i = 1:n] rounds(word(dirs, i)) using ($2 > 0 ? $2 : 0.1):(1) \
	smooth cnormal title legend(i) lw 2 dashtype dash_of(i)
