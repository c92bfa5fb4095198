# The comparison at equal memory, drawn from window_summary.csv (medians).
#
#   gnuplot -e "dir='docs/eval'" test/eval/window_figures.gp

set terminal pngcairo size 1400,1000 font "sans,11" linewidth 1.5
set datafile separator ","
set grid
summary = dir."/window_summary.csv"
names = "counting_bf4 stable_bf guarded_epoch_r4 guarded_epoch_r8 blocked_epoch_r8 continuous_bf4 rotating_bf tlbf"
labels = "counting-4bit stable guarded-r4 guarded-r8 blocked-r8 continuous-4bit rotating tlbf"
corpora = "synthetic synthetic-time weblog-count weblog-time"
patterns = "all bursty weblog weblog"
titles = "'synthetic streams, window of 20,000 insertions' 'bursty streams, time window (real times)' 'web log, window of 20,000 requests' 'web log, window of 5 minutes'"

row(g, s) = (strcol(1) eq word(corpora, g) && strcol(2) eq word(patterns, g) && strcol(4) eq word(names, s))

# Corpora with rows: a smoke run without the web log has none of its lines,
# and gnuplot refuses to plot no points, so their panels stay empty.
array present[4]
do for [g=1:4] {
	stats summary using (row(g, 8) ? 1 : 0) nooutput
	present[g] = STATS_sum > 0
}

set output dir."/window_fpr.png"
set multiplot layout 2,2 title "False-positive rate on fresh keys at equal memory (median over patterns and seeds; a rate of 0 is not drawn)"
set logscale y
set format y "10^{%T}"
set xlabel "memory budget (bits per live item)"
set ylabel "false-positive rate"
set xrange [7.5:14.5]
set xtics (8, 12, 14)
set key outside right
do for [g=1:4] {
	set title word(titles, g)
	if (!present[g]) { set multiplot next; continue }
	plot for [s=1:8] summary using (row(g, s) ? column(3) : NaN):(column(7) > 0 ? column(7) : NaN) \
		smooth unique with linespoints lw (s == 8 ? 3 : 1.5) pt s ps 1.3 title word(labels, s)
}
unset multiplot
unset logscale y
set format y "%g"

set terminal pngcairo size 1400,560 font "sans,11" linewidth 1.5
set output dir."/window_throughput.png"
set multiplot layout 1,2 title "Query throughput, hashing included, same harness and machine (median; 14 bits per live item)"
set style fill solid 0.6 border -1
set boxwidth 0.7
set xrange [0.3:8.7]
set xtics rotate by -30 ("counting-4bit" 1, "stable" 2, "guarded-r4" 3, "guarded-r8" 4, "blocked-r8" 5, "continuous-4bit" 6, "rotating" 7, "tlbf" 8)
set key off
set ylabel "million queries per second"
set xlabel ""
set yrange [0:*]
do for [g in "1 4"] {
	gi = g + 0
	set title word(titles, gi)
	if (!present[gi]) { set multiplot next; continue }
	plot for [s=1:8] summary using (s):(row(gi, s) && column(3) == 14 ? column(10) : NaN) with boxes lc s
}
unset multiplot

set output dir."/window_errors.png"
set multiplot layout 1,2 title "Errors at 14 bits per live item (median): fresh-key false positives, live false negatives, expired-key positives"
set key inside top right
set yrange [0:*]
set ylabel "rate"
set boxwidth 0.25
do for [g in "1 4"] {
	gi = g + 0
	set title word(titles, gi)
	if (!present[gi]) { set multiplot next; continue }
	plot for [s=1:8] summary using (s - 0.27):(row(gi, s) && column(3) == 14 ? column(7) : NaN) with boxes lc 1 title (s == 1 ? "false-positive rate" : ""), \
		 for [s=1:8] summary using (s):(row(gi, s) && column(3) == 14 ? column(8) : NaN) with boxes lc 2 title (s == 1 ? "live false-negative rate" : ""), \
		 for [s=1:8] summary using (s + 0.27):(row(gi, s) && column(3) == 14 ? column(9) : NaN) with boxes lc 3 title (s == 1 ? "expired-key positive rate" : "")
}
unset multiplot
