# Shared settings for the rsslim figures; each script loads it first.
# The caller sets: out (file name without extension), fmt ("png" or "svg"),
# and may set the size in pixels (w, h) before loading this file.
if (!exists("w")) w = 1000
if (!exists("h")) h = 700
if (fmt eq "svg") {
	set terminal svg size w, h dynamic font "sans,11" background rgb "white"
} else {
	set terminal pngcairo size w, h font "sans,10"
}
set output out . "." . fmt
set datafile separator "\t"
set datafile commentschars "#"
set key outside right top box
set grid
set style data lines
# The sample rows of one role (victim, hog, ...) of a samples.tsv file.
role(file, r) = sprintf("< awk -F'\t' '$2 == \"%s\"' %s", r, file)
