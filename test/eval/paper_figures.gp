# Figures 1 to 5 of the Time-limited Bloom Filter paper (section 7), drawn
# from paper_series.csv and paper_fpr.csv.
#
#   gnuplot -e "dir='docs/eval'" test/eval/paper_figures.gp
#
# The series has a line whenever a value changed; the values hold until the
# next line, hence "with steps".

set terminal pngcairo size 1400,560 font "sans,11" linewidth 1.5
set datafile separator ","
set grid
set key top right
series = dir."/paper_series.csv"
fpr = dir."/paper_fpr.csv"
ks = "4 5 6 7 8"
ls = "3 7 14 28 56"
rates = "0.1 0.01 0.001 0.0001"

# one filter of the figures: capacity c, configuration i (1..5)
pick(c, i) = (column(1) == c && column(2) == word(ks, i) + 0)
fig_title(i) = sprintf("k=%s, l=%s", word(ks, i), word(ls, i))
# one filter of the false-positive runs: capacity c, rate j (1..4)
pick_rate(c, j) = (column(1) == c && abs(column(2) - word(rates, j)) < 1e-12)

do for [c in "1000 10000"] {
	cap = c + 0
	fig = (cap == 1000) ? "1" : "2"
	sized = (cap == 1000) ? "under-sized" : "over-sized"
	set output sprintf("%s/paper_fig%s_capacity%s.png", dir, fig, c)
	set multiplot layout 1,2 title sprintf("Figure %s: initial capacity %s (%s); error rate 0.1, span 300 s, one element every 0.1 s", fig, c, sized)
	set title "(a) number of slices"
	set xlabel "insertion"
	set ylabel "slices"
	set yrange [0:*]
	plot for [i=1:5] series using (pick(cap, i) ? column(4) : NaN):6 with steps title fig_title(i)
	set title "(b) size of slice 0"
	set ylabel "bits"
	set logscale y
	set yrange [*:*]
	plot for [i=1:5] series using (pick(cap, i) ? column(4) : NaN):7 with steps title fig_title(i)
	unset logscale y
	unset multiplot
}

set output dir."/paper_fig3_bits_per_element.png"
set multiplot layout 1,2 title "Figure 3: bits per element of the live window (elements inserted within the last 300 s); error rate 0.1"
set ylabel "bits per element"
set xlabel "insertion"
set yrange [0:40]
set title "(a) initial capacity 1,000"
plot for [i=1:5] series using (pick(1000, i) ? column(4) : NaN):10 with steps title fig_title(i)
set title "(b) initial capacity 10,000"
plot for [i=1:5] series using (pick(10000, i) ? column(4) : NaN):10 with steps title fig_title(i)
unset multiplot
set yrange [*:*]

do for [c in "1000 10000"] {
	cap = c + 0
	fig = (cap == 1000) ? "4" : "5"
	set output sprintf("%s/paper_fig%s_fpr_capacity%s.png", dir, fig, c)
	set multiplot layout 1,2 title sprintf("Figure %s: initial capacity %s; error rates 0.1 to 0.0001 (default k, l); sampled every 50 insertions", fig, c)
	set xlabel "insertion"
	if (cap == 1000) {
		set title "(a) number of slices"
		set ylabel "slices"
		set yrange [0:*]
		plot for [j=1:4] fpr using (pick_rate(cap, j) ? column(5) : NaN):7 with steps title "error rate ".word(rates, j)
	} else {
		set title "(a) size of slice 0"
		set ylabel "bits"
		set logscale y
		set yrange [*:*]
		plot for [j=1:4] fpr using (pick_rate(cap, j) ? column(5) : NaN):8 with steps title "error rate ".word(rates, j)
	}
	set title "(b) false-positive rate (dashed: the target)"
	set ylabel "false-positive rate"
	set logscale y
	set yrange [1e-5:1]
	set format y "10^{%T}"
	plot for [j=1:4] fpr using (pick_rate(cap, j) ? column(5) : NaN):11 with lines lc j title "error rate ".word(rates, j), \
		 for [j=1:4] (word(rates, j) + 0) with lines dt 2 lc j notitle
	unset logscale y
	set format y "%g"
	set yrange [*:*]
	unset multiplot
}
