# The inference experiment (issue 17), drawn from inference_calibration.csv,
# inference_penalties.csv and inference_last_seen.csv.
#
#   gnuplot -e "dir='docs/eval'" test/eval/inference_figures.gp

set terminal pngcairo size 1800,900 font "sans,11" linewidth 1.5
set datafile separator ","
set grid
calibration = dir."/inference_calibration.csv"
penalties = dir."/inference_penalties.csv"
last_seen = dir."/inference_last_seen.csv"
streams = "paper zipf bursty weblog"
stream_titles = "'TLBF paper stream (300 s)' 'zipf (window of 20,000)' 'bursty (real times)' 'web log (5 minutes)'"
budgets = "8 12 14 1%"
budget_titles = "'8 bits' '12 bits' '14 bits' '1% target'"
priors = "base_rate 0.5"

# The files hold format 3's lines too (their last column, format, is 3);
# the plots show format 2's.  The column is the calibration file's 24th,
# the penalties' 22nd and last seen's 25th: format_column is set to the
# file's before each plot.
format2(c) = strcol(c) eq "2"

# Streams with lines: a smoke run without the web log has none of its lines,
# and gnuplot refuses to plot no points, so their panels stay empty.
array present[4]
do for [s=1:4] {
	stats last_seen using (strcol(1) eq word(streams, s) ? 1 : 0) nooutput
	present[s] = STATS_sum > 0
}

# --- calibration: observed fraction in the window against the bin ----------
cal(s, b, p) = (strcol(1) eq word(streams, s) && strcol(2) eq word(budgets, b) && strcol(7) eq word(priors, p) && format2(24))
set output dir."/inference_calibration.png"
set multiplot layout 2,4 title "Calibration of tlbf\\_posterior: positive answers in 20 bins of the posterior; fraction really in the window against the bin's midpoint (dashed: perfect)"
set xrange [0:1]
set yrange [0:1]
set xtics 0.2
set ytics 0.2
set key top left
do for [p=1:2] {
	do for [s=1:4] {
		set title word(stream_titles, s).(p == 1 ? ", prior = base rate" : ", prior = 0.5")
		set xlabel "posterior (bin midpoint)"
		set ylabel "fraction in the window"
		if (!present[s]) { set multiplot next; continue }
		array err[4]
		do for [b=1:4] {
			stats calibration using (cal(s, b, p) ? column(10) : NaN) nooutput
			err[b] = STATS_max
		}
		plot x with lines dt 2 lc "black" notitle, \
			for [b=1:4] calibration using (cal(s, b, p) && column(17) >= 20 ? column(16) : NaN):19 \
				with linespoints pt b ps 1.1 lc b title sprintf("%s (error %.3f)", word(budget_titles, b), err[b])
	}
}
unset multiplot

# --- penalties: total against bits per item ---------------------------------
pen(s) = (strcol(1) eq word(streams, s) && strcol(2) ne "1%" && format2(format_column))
pen_target(s) = (strcol(1) eq word(streams, s) && strcol(2) eq "1%" && format2(format_column))
format_column = 22
set terminal pngcairo size 1600,650 font "sans,11" linewidth 1.5
set output dir."/inference_penalties.png"
set multiplot layout 1,2 title "Per-query penalties uniform in [1, 10): tlbf\\_query's yes/no against the posterior decision (yes iff p >= fp / (fp + fn))"
set autoscale
set xrange [3:21]
set xtics 2
set ytics auto
set xlabel "bits per live item (tlbf's bit arrays, mean over checkpoints)"
set title "(a) mean penalty per query: posterior decision (solid), plain contains (dashed); 1% target: squares"
set ylabel "penalty per query"
set logscale y
set key top right
plot for [s=1:4] penalties using (pen(s) ? column(6) : NaN):($12 / $7) with linespoints lc s pt 7 title word(streams, s)." posterior", \
	for [s=1:4] penalties using (pen(s) ? column(6) : NaN):($11 / $7) with linespoints lc s dt 2 pt 6 title word(streams, s)." contains", \
	for [s=1:4] penalties using (pen_target(s) ? column(6) : NaN):($12 / $7) with points lc s pt 5 ps 1.5 notitle
unset logscale y
set title "(b) penalty ratio, posterior decision / plain contains (below 1: the posterior pays less)"
set ylabel "ratio"
set yrange [0.4:1.1]
set key bottom right
plot 1 with lines dt 3 lc "black" notitle, \
	for [s=1:4] penalties using (pen(s) ? column(6) : NaN):13 with linespoints lc s pt 7 title word(streams, s).", prior = base rate", \
	for [s=1:4] penalties using (pen(s) ? column(6) : NaN):17 with linespoints lc s dt 2 pt 6 title word(streams, s).", prior = 0.5", \
	for [s=1:4] penalties using (pen_target(s) ? column(6) : NaN):13 with points lc s pt 5 ps 1.5 notitle
unset multiplot

# --- last seen ------------------------------------------------------------------
set terminal pngcairo size 1800,600 font "sans,11" linewidth 1.5
set output dir."/inference_last_seen.png"
format_column = 25
set multiplot layout 1,3 title "tlbf\\_last\\_seen: does the range hold the key's last insertion time, and how wide is it? (1% target: squares)"
set autoscale
set xrange [3:21]
set xtics 2
set key bottom right
set title "(a) live keys whose range holds their last insertion (solid) and 1 - FPR (dashed)"
set ylabel "fraction"
set yrange [0.6:1.01]
plot for [s=1:4] last_seen using (pen(s) ? column(6) : NaN):11 with linespoints lc s pt 7 title word(streams, s)." held", \
	for [s=1:4] last_seen using (pen(s) ? column(6) : NaN):17 with linespoints lc s dt 2 pt 6 title word(streams, s)." 1 - FPR", \
	for [s=1:4] last_seen using (pen_target(s) ? column(6) : NaN):11 with points lc s pt 5 ps 1.5 notitle
set title "(b) median width of the range / span (unbounded ranges count as infinite)"
set ylabel "width / span"
set yrange [0:*]
set key top right
plot for [s=1:4] last_seen using (pen(s) ? column(6) : NaN):22 with linespoints lc s pt 7 title word(streams, s), \
	for [s=1:4] last_seen using (pen_target(s) ? column(6) : NaN):22 with points lc s pt 5 ps 1.5 notitle
set title "(c) keys given a range: expired within the last span (solid), never added (dashed)"
set ylabel "fraction"
set logscale y
set format y "10^{%T}"
set yrange [1e-5:1]
set key bottom left
plot for [s=1:4] last_seen using (pen(s) ? column(6) : NaN):20 with linespoints lc s pt 7 title word(streams, s)." expired", \
	for [s=1:4] last_seen using (pen(s) ? column(6) : NaN):($16 > 0 ? $16 : NaN) with linespoints lc s dt 2 pt 6 title word(streams, s)." never added (FPR)"
unset logscale y
set format y "%g"
unset multiplot
