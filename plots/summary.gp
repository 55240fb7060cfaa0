# Figure 5: per scenario, victim p99 latency, victim major faults and hog
# throughput, MGLRU and classic LRU side by side.
# Variables: pivot (TSV: scenario, then mglru/classic pairs of p99, majflt, hog%), out, fmt.
w = 1200
h = 900
load "plots/common.gp"
set multiplot layout 3, 1 title "Summary by scenario (MGLRU vs classic LRU)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 noenhanced
set key inside top right
set title "victim p99 latency (us)"
plot pivot using 2:xtic(1) skip 1 title "MGLRU" lc rgb "#1f77b4", '' using 3 skip 1 title "classic" lc rgb "#ff7f0e"
set title "victim major faults"
plot pivot using 4:xtic(1) skip 1 title "MGLRU" lc rgb "#1f77b4", '' using 5 skip 1 title "classic" lc rgb "#ff7f0e"
set title "hog throughput (% of hog-unlimited)"
plot pivot using 6:xtic(1) skip 1 title "MGLRU" lc rgb "#1f77b4", '' using 7 skip 1 title "classic" lc rgb "#ff7f0e"
unset multiplot
