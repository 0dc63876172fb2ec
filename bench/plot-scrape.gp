# Scrape p50 latency and RSS per size and tool (bench/driver/report.py feeds
# it). Usage: gnuplot -e "datafile='scrape.dat'; out='benchmarks-scrape.png'" plot-scrape.gp
set terminal pngcairo size 1100,420 font "sans,10"
set output out
set multiplot layout 1,2
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left
set grid ytics
set xtics nomirror
set title "Scrape p50 (one keep-alive connection)"
set ylabel "ms (log scale)"
set logscale y
plot datafile using 2:xtic(1) title "seatwatch" lc rgb "#1b9e77", \
     '' using 3 title "postgres\\_exporter" lc rgb "#d95f02", \
     '' using 4 title "sql\\_exporter" lc rgb "#7570b3"
set title "Resident memory (largest VmRSS sampled)"
set ylabel "MiB"
unset logscale y
set yrange [0:*]
plot datafile using 5:xtic(1) title "seatwatch" lc rgb "#1b9e77", \
     '' using 6 title "postgres\\_exporter" lc rgb "#d95f02", \
     '' using 7 title "sql\\_exporter" lc rgb "#7570b3"
unset multiplot
