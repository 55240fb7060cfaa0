# Figure 1: resident memory of the victim and the hog over time, one panel
# per scenario, with the hog's RSS limit as a dashed line.
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
do for [i = 1:n] {
	d = word(dirs, i)
	lim = word(limits, i) + 0
	set title word(labels, i) noenhanced
	if (lim > 0) { set arrow 1 from graph 0, first lim to graph 1, first lim nohead dt 2 lc rgb "red" } else { unset arrow 1 }
	hog_rows = int(system(role(d . "/samples.tsv", "hog")[3:] . " | wc -l"))
	if (hog_rows > 0) {
		plot role(d . "/samples.tsv", "victim") using ($1 / 1000):($5 / 1024) title "victim" lw 2 lc rgb "#1f77b4", \
		     role(d . "/samples.tsv", "hog") using ($1 / 1000):($5 / 1024) title "hog" lw 2 lc rgb "#d62728"
	} else {
		plot role(d . "/samples.tsv", "victim") using ($1 / 1000):($5 / 1024) title "victim" lw 2 lc rgb "#1f77b4"
	}
}
unset multiplot
