# Kato et al.'s dumbbell in ns-2.35 with each sender's rtt_ traced, as a 2000s-era ns-2 user
# would record "the RTT" (`$tcp trace rtt_` into a trace file). `ns kato_rtt.tcl key=value ...`
#
#   pairs     N senders (default 1)
#   tick      Agent/TCP tcpTick_ in seconds (default 0.01, ns-2's default)
#   linterm   RED's linterm_ = 1/max_p (default 50: the paper's p_max 0.02)
#   duration  seconds (default 240)
#   seed      RNG seed of the flows' start times in [0, 1) s (default 1)
#   out       trace file to write (default rtt.tr)
#   qout      trace file of RED's ave_ at R1 (default none): one record "a time ave_" per change,
#             i.e. per arrival
#
# Setup as bench/peer/ns2peer.py's kato-N (docs/reproductions/kato.md): 1000 Mb/s 1 ms access
# links, 100 Mb/s 10 ms bottleneck with RED (thresh 30, maxthresh 90, q_weight 8.32e-5, not
# gentle, limit 500) at R1, DropTail back, Reno senders (window_ 10000, 1000-B segments + 40-B
# header), TCPSink receivers, FTP from U[0, 1) s. ns-2 writes a traced variable only when its
# value changes; each rtt_ record is "time src sport dst dport rtt_ value-in-seconds".

array set opt { pairs 1 tick 0.01 linterm 50 duration 240 seed 1 out rtt.tr qout {} }
foreach a $argv {
    set i [string first = $a]
    if {$i < 1} { puts stderr "argument '$a': expected key=value"; exit 2 }
    set k [string range $a 0 [expr $i - 1]]
    if {![info exists opt($k)]} { puts stderr "unknown key '$k'; known: [lsort [array names opt]]"; exit 2 }
    set opt($k) [string range $a [expr $i + 1] end]
}

set ns [new Simulator]
Queue set limit_ 500
foreach {k v} [list bytes_ false queue_in_bytes_ false mean_pktsize_ 1040 thresh_ 30 maxthresh_ 90 \
        linterm_ $opt(linterm) q_weight_ 8.32e-5 gentle_ false] {
    Queue/RED set $k $v
}
Agent/TCP set window_ 10000
Agent/TCP set tcpTick_ $opt(tick)

set r1 [$ns node]
set r2 [$ns node]
$ns simplex-link $r1 $r2 100Mb 10ms RED
$ns simplex-link $r2 $r1 100Mb 10ms DropTail
$ns queue-limit $r1 $r2 500

set f [open $opt(out) w]
set qf {}
if {$opt(qout) != ""} {
    set qf [open $opt(qout) w]
    set red [[$ns link $r1 $r2] queue]
    $red trace ave_
    $red attach $qf
}
set rng [new RNG]
$rng seed $opt(seed)
for {set i 1} {$i <= $opt(pairs)} {incr i} {
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 1000Mb 1ms DropTail
    $ns duplex-link $r2 $d 1000Mb 1ms DropTail
    set t [new Agent/TCP/Reno]
    $t set fid_ $i
    set k [new Agent/TCPSink]
    $ns attach-agent $s $t
    $ns attach-agent $d $k
    $ns connect $t $k
    $t attach $f
    $t trace rtt_
    set ftp [$t attach-app FTP]
    $ns at [$rng uniform 0 1] "$ftp start"
}
proc finish {} {
    global f qf
    close $f
    if {$qf != ""} { close $qf }
    exit 0
}
$ns at $opt(duration) "finish"
$ns run
