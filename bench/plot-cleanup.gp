# Claim latency per second under the three cleanup modes, and holds freed by
# seatwatch (bench/driver/report.py feeds it).
# Usage: gnuplot -e "datadir='plot'; out='benchmarks-cleanup.png'" plot-cleanup.gp
set terminal pngcairo size 1100,640 font "sans,10"
set output out
set multiplot layout 2,1
set grid
set key top right
set xlabel "seconds since the claim workload started"
set xrange [0:*]
set title "Claims: p99 latency, by the second each claim started"
set ylabel "ms (log scale)"
set logscale y
plot datadir."/cleanup-off.dat" using 1:4 with lines lw 2 lc rgb "#666666" title "no cleanup", \
     datadir."/cleanup-seatwatch.dat" using 1:4 with lines lw 2 lc rgb "#1b9e77" title "seatwatch cleanup", \
     datadir."/cleanup-naive.dat" using 1:4 with lines lw 2 lc rgb "#d95f02" title "naive single UPDATE"
unset logscale y
set title "Holds freed by seatwatch's cleanup"
set ylabel "holds (cumulative)"
set yrange [0:*]
set format y "%.0s%c"
plot datadir."/cleanup-freed.dat" using 1:2 with lines lw 2 lc rgb "#1b9e77" title "seatwatch\\_cleanup\\_freed\\_total"
unset multiplot
