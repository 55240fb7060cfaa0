# Figure 6: the 2004 test: the sleeping victim's resident memory over time,
# for each way of enforcing the hog's limit (and none).
# Variables: dirs, labels, out, fmt.
load "plots/common.gp"
n = words(dirs)
set title "2004 test: resident memory of a sleeping 100 MiB process beside a sorting hog under ulimit -m 4000"
set xlabel "time (s)"
set ylabel "sleeper RSS (MiB)"
set yrange [0:*]
plot for [i = 1:n] role(word(dirs, i) . "/samples.tsv", "victim") \
	using ($1 / 1000):($5 / 1024) title word(labels, i) lw 2
