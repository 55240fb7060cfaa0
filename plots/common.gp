# Shared settings for the rsslim figures; each script loads it first.
# The caller sets: out (file name without extension), fmt ("png" or "svg").
if (fmt eq "svg") {
	set terminal svg size 1000,700 dynamic font "sans,11" background rgb "white"
} else {
	set terminal pngcairo size 1000,700 font "sans,10"
}
set output out . "." . fmt
set datafile separator "\t"
set datafile commentschars "#"
set key outside right top box
set grid
set style data lines
