# aqmlab's ns-2 peer: one parameterised dumbbell (ns-2.35, `ns dumbbell.tcl key=value ...`).
#
# N pairs s_i -- r1 == r2 -- d_i; the discipline under test on r1 -> r2; bulk TCP flows (FTP)
# and CBR/UDP flows between pairs; statistics over [warmup, duration]; one JSON line on stdout.
# bench/peer/run.py builds the argument list for each scenario (README.md lists them); every
# key has a default below. Lists are Tcl lists (one argument, space separated).
#
#   pairs        N (default 10)
#   bw delay     bottleneck, e.g. 100Mb 10ms
#   abw adelay   access links (default 1000Mb 1ms); abws / adelays: one per pair (override)
#   qdisc        RED DropTail REM PI Vq FQ SFQ DRR (ns-2's own classes)
#   limit        the bottleneck queue's limit in packets (ns-2 queue-limit)
#   olimit       every other queue's limit (Queue set limit_)
#   qset         "var value ..." set on the bottleneck queue object after creation
#   qclass       "var value ..." set on Queue/<qdisc> before creation (e.g. per-flow DropTail in FQ)
#   tcp          Reno Newreno Sack1 ... (Agent/TCP/<tcp>; "" = Tahoe Agent/TCP)
#   tcpvars      "var value ..." for Agent/TCP (window_, windowInit_, minrto_, tcpTick_, ...)
#   sink         TCPSink or TCPSink/DelAck; delack = its interval_
#   tcpflows     "pair start jitter ..." one triple per TCP flow
#   cbrflows     "pair rate size start jitter ..." one 5-tuple per CBR flow (UDP)
#   expflows     "pair rate size burst idle start jitter ..." one 7-tuple per on/off flow (UDP,
#                Application/Traffic/Exponential: rate_ while on, mean burst_time_ / idle_time_)
#   duration warmup seed sample
#
# Measurements (the bottleneck r1 -> r2): a QueueMonitor/ED between the link's head and its
# transmitter: arrivals, departures, drops (early = RED's unforced drops, routed through
# early-drop-target), the time-integrated queue in packets (waiting, not in transmission),
# departed bytes for utilization. RED's ave_ and each TCP sender's latest RTT sample (rtt_,
# in ticks) are read every `sample` seconds. TCP goodput from each sink's in-order bytes
# (bytes_, which counts the 40-B header too: scaled to payload); UDP from LossMonitor bytes_.

array set opt {
    pairs 10 bw 100Mb delay 10ms abw 1000Mb adelay 1ms abws {} adelays {}
    qdisc RED limit 500 olimit 10000 qset {} qclass {}
    tcp Newreno tcpvars {} sink TCPSink delack 0.1 header 40
    tcpflows {} cbrflows {} expflows {}
    duration 240 warmup 60 seed 1 sample 0.01
}
foreach a $argv {
    set i [string first = $a]
    if {$i < 1} { puts stderr "argument '$a': expected key=value"; exit 2 }
    set k [string range $a 0 [expr $i - 1]]
    if {![info exists opt($k)]} { puts stderr "unknown key '$k'; known: [lsort [array names opt]]"; exit 2 }
    set opt($k) [string range $a [expr $i + 1] end]
}

set ns [new Simulator]
global defaultRNG
$defaultRNG seed $opt(seed)
set rng [new RNG]
$rng seed [expr $opt(seed) * 7919 + 1]

Queue set limit_ $opt(olimit)
foreach {k v} $opt(qclass) { Queue/$opt(qdisc) set $k $v }

set r1 [$ns node]
set r2 [$ns node]
$ns simplex-link $r1 $r2 $opt(bw) $opt(delay) $opt(qdisc)
$ns simplex-link $r2 $r1 $opt(bw) $opt(delay) DropTail
$ns queue-limit $r1 $r2 $opt(limit)
set link [$ns link $r1 $r2]
set q [$link queue]
foreach {k v} $opt(qset) { $q set $k $v }

set S {}
set D {}
for {set i 1} {$i <= $opt(pairs)} {incr i} {
    set bw $opt(abw)
    set dl $opt(adelay)
    if {[llength $opt(abws)]} { set bw [lindex $opt(abws) [expr $i - 1]] }
    if {[llength $opt(adelays)]} { set dl [lindex $opt(adelays) [expr $i - 1]] }
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 $bw $dl DropTail
    $ns duplex-link $r2 $d $bw $dl DropTail
    lappend S $s
    lappend D $d
}

# Monitor on the bottleneck (before any traffic is attached).
set qmon [new QueueMonitor/ED]
set dsnoop [new SnoopQueue/Drop]
$link attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] $dsnoop $qmon
# FQLink's per-flow queues drop to the link's drpT_: count those drops too.
$link set drpT_ $dsnoop
set pint [new Integrator]
$qmon set-pkts-integrator $pint
set bint [new Integrator]
$qmon set-bytes-integrator $bint
set early_capable 0
if {$opt(qdisc) == "RED"} {
    set esnoop [new SnoopQueue/EDrop]
    $esnoop set-monitor $qmon
    $esnoop target [$ns set nullAgent_]
    $q early-drop-target $esnoop
    set early_capable 1
}

foreach {k v} $opt(tcpvars) { Agent/TCP set $k $v }
Agent/TCPSink/DelAck set interval_ $opt(delack)

set fid 0
set tcps {}
set sinks {}
foreach {p start jit} $opt(tcpflows) {
    incr fid
    if {$opt(tcp) == ""} { set t [new Agent/TCP] } else { set t [new Agent/TCP/$opt(tcp)] }
    set k [new Agent/$opt(sink)]
    $t set fid_ $fid
    $ns attach-agent [lindex $S [expr $p - 1]] $t
    $ns attach-agent [lindex $D [expr $p - 1]] $k
    $ns connect $t $k
    set ftp [$t attach-app FTP]
    $ns at [expr $start + [$rng uniform 0 $jit]] "$ftp start"
    lappend tcps $t
    lappend sinks $k
}
set cbrs {}
set cbrsinks {}
foreach {p rate size start jit} $opt(cbrflows) {
    incr fid
    set u [new Agent/UDP]
    $u set fid_ $fid
    $u set packetSize_ $size
    set m [new Agent/LossMonitor]
    $ns attach-agent [lindex $S [expr $p - 1]] $u
    $ns attach-agent [lindex $D [expr $p - 1]] $m
    $ns connect $u $m
    set c [new Application/Traffic/CBR]
    $c set packetSize_ $size
    $c set rate_ $rate
    $c attach-agent $u
    $ns at [expr $start + [$rng uniform 0 $jit]] "$c start"
    lappend cbrs $u
    lappend cbrsinks $m
}
foreach {p rate size burst idle start jit} $opt(expflows) {
    incr fid
    set u [new Agent/UDP]
    $u set fid_ $fid
    $u set packetSize_ $size
    set m [new Agent/LossMonitor]
    $ns attach-agent [lindex $S [expr $p - 1]] $u
    $ns attach-agent [lindex $D [expr $p - 1]] $m
    $ns connect $u $m
    set c [new Application/Traffic/Exponential]
    $c set packetSize_ $size
    $c set rate_ $rate
    $c set burst_time_ $burst
    $c set idle_time_ $idle
    $c attach-agent $u
    $ns at [expr $start + [$rng uniform 0 $jit]] "$c start"
    lappend cbrs $u
    lappend cbrsinks $m
}

# ---- measurement ----
set tick [Agent/TCP set tcpTick_]
set nsamp 0
set avgsum 0.0
set rttsum {}
set rttn {}
foreach t $tcps { lappend rttsum 0.0; lappend rttn 0 }

proc sample {} {
    global ns opt q nsamp avgsum tcps rttsum rttn tick
    if {$opt(qdisc) == "RED"} { set avgsum [expr $avgsum + [$q set ave_]] }
    incr nsamp
    set i 0
    foreach t $tcps {
        set r [$t set rtt_]
        if {$r > 0} {
            lset rttsum $i [expr [lindex $rttsum $i] + $r * $tick]
            lset rttn $i [expr [lindex $rttn $i] + 1]
        }
        incr i
    }
    set nxt [expr [$ns now] + $opt(sample)]
    if {$nxt <= $opt(duration) + 1e-9} { $ns at $nxt "sample" }
}

proc snap {} {
    global ns qmon pint bint tcps sinks cbrsinks
    $pint newpoint [$ns now] [$qmon set pkts_]
    $bint newpoint [$ns now] [$qmon set size_]
    set d [dict create t [$ns now] parr [$qmon set parrivals_] pdep [$qmon set pdepartures_] \
        bdep [$qmon set bdepartures_] pdrops [$qmon set pdrops_] edrops [$qmon set epdrops_] \
        qsum [$pint set sum_] bqsum [$bint set sum_]]
    set g {}
    foreach k $sinks { lappend g [$k set bytes_] }
    dict set d sinkbytes $g
    set g {}
    foreach m $cbrsinks { lappend g [$m set bytes_] }
    dict set d udpbytes $g
    set rx {}
    set rto {}
    foreach t $tcps { lappend rx [$t set nrexmitpack_]; lappend rto [$t set nrexmit_] }
    dict set d retx $rx
    dict set d rtos $rto
    return $d
}

# ns-2's byte counters are 32-bit ints: differences are taken modulo 2^32, which is exact while
# less than 4 GiB pass in the window (34 Gb: 340 s at 100 Mb/s).
proc delta {a b} { return [expr {($b - $a) % 4294967296}] }

proc num {x} {
    if {$x == "null"} { return null }
    return [format %.10g $x]
}

proc finish {} {
    global ns opt w0 early_capable nsamp avgsum rttsum rttn tcps
    set w1 [snap]
    set win [expr [dict get $w1 t] - [dict get $w0 t]]
    set bw [bw_parse $opt(bw)]
    set dep [delta [dict get $w0 bdep] [dict get $w1 bdep]]
    set util [expr 100.0 * $dep * 8 / ($bw * $win)]
    set arr [expr [dict get $w1 parr] - [dict get $w0 parr]]
    set drops [expr [dict get $w1 pdrops] - [dict get $w0 pdrops]]
    set edrops [expr [dict get $w1 edrops] - [dict get $w0 edrops]]
    set meanq [expr ([dict get $w1 qsum] - [dict get $w0 qsum]) / $win]
    set meanqb [expr ([dict get $w1 bqsum] - [dict get $w0 bqsum]) / $win]
    # mean waiting time of the bytes that left (Little's law: mean queue bytes / departure rate)
    set qdelay [expr $dep > 0 ? 1000.0 * $meanqb * $win / $dep : 0.0]
    set mss [Agent/TCP set packetSize_]
    set good {}
    foreach a [dict get $w0 sinkbytes] b [dict get $w1 sinkbytes] {
        lappend good [expr [delta $a $b] * 8.0 * $mss / ($mss + $opt(header)) / $win / 1e6]
    }
    set udp {}
    foreach a [dict get $w0 udpbytes] b [dict get $w1 udpbytes] {
        lappend udp [expr [delta $a $b] * 8.0 / $win / 1e6]
    }
    set n [llength $good]
    set gm null; set gmin null; set gmax null; set jain null
    if {$n} {
        set s 0.0; set s2 0.0
        foreach g $good { set s [expr $s + $g]; set s2 [expr $s2 + $g * $g] }
        set gm [expr $s / $n]
        set gmin [lindex [lsort -real $good] 0]
        set gmax [lindex [lsort -real $good] end]
        if {$s2 > 0} { set jain [expr $s * $s / ($n * $s2)] }
    }
    set rtts {}
    foreach s $rttsum c $rttn { if {$c > 0} { lappend rtts [expr $s / $c] } }
    set rtt null
    if {[llength $rtts]} { set x 0.0; foreach r $rtts { set x [expr $x + $r] }; set rtt [expr 1000.0 * $x / [llength $rtts]] }
    set retx 0; set rtos 0
    foreach a [dict get $w0 retx] b [dict get $w1 retx] { incr retx [expr $b - $a] }
    foreach a [dict get $w0 rtos] b [dict get $w1 rtos] { incr rtos [expr $b - $a] }
    set ravg null
    if {$opt(qdisc) == "RED" && $nsamp} { set ravg [expr $avgsum / $nsamp] }
    if {$early_capable} { set e [num $edrops]; set f [num [expr $drops - $edrops]] } else { set e null; set f null }
    set frac [expr $arr > 0 ? double($drops) / $arr : 0.0]
    puts [format {{"simulator": "ns-2", "utilization_pct": %s, "mean_queue_pkts": %s, "mean_queue_bytes": %s, "mean_wait_ms": %s, "red_avg_queue_pkts": %s, "arrivals": %s, "drops": %s, "early_drops": %s, "forced_drops": %s, "drop_fraction": %s, "goodput_mean_mbps": %s, "goodput_min_mbps": %s, "goodput_max_mbps": %s, "jain_index": %s, "mean_rtt_ms": %s, "tcp_retransmissions": %s, "tcp_timeouts": %s, "tcp_goodputs_mbps": [%s], "udp_throughputs_mbps": [%s], "bottleneck_tx_pkts": %s}} \
        [num $util] [num $meanq] [num $meanqb] [num $qdelay] [num $ravg] $arr $drops $e $f [num $frac] [num $gm] [num $gmin] [num $gmax] [num $jain] [num $rtt] \
        $retx $rtos [join [lmap x $good {num $x}] ", "] [join [lmap x $udp {num $x}] ", "] \
        [expr [dict get $w1 pdep] - [dict get $w0 pdep]]]
    exit 0
}

$ns at $opt(warmup) {
    set w0 [snap]
    set nsamp 0
    set avgsum 0.0
    set rttsum [lmap x $rttsum {expr 0.0}]
    set rttn [lmap x $rttn {expr 0}]
    sample
}
$ns at $opt(duration) "finish"
$ns run
