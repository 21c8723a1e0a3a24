// aqmlab bench/peer: the reference dumbbell in ns-3, for side-by-side runs with aqmlab.
//
//   N senders --1 Gb/s, 1 ms-- R1 --100 Mb/s, 10 ms-- R2 --1 Gb/s, 1 ms-- N receivers
//
// The queue discipline under test sits on R1's egress toward R2 (limit 500 packets) above a
// 1-packet device queue, so the discipline holds the real queue. Every other interface has a
// 10000-packet FIFO discipline. N bulk TCP flows (NewReno, ns-3's default PRR recovery unless
// told otherwise) start at uniform random times in [0, 1) s.
//
// Prints one JSON object on one line with the metrics of the ns-3 reference rows (tests/data/ns3_dumbbell_*.csv)
// (statistics over [warmup, duration]) plus wall time, ns-3 event count and peak RSS.
// build.sh compiles it against the ns3 wheel; run.py drives it.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// ---------------------------------------------------------------------------------------------
// RED's own EWMA average is a private member of RedQueueDisc with no getter or trace source.
// An explicit template instantiation may name a private member (C++ [temp.spec]/6), which lets
// us read it without patching ns-3.
template <typename Tag, typename Tag::type Member>
struct ExposeMember
{
    friend typename Tag::type Get(Tag)
    {
        return Member;
    }
};

struct RedAverage
{
    using type = double RedQueueDisc::*;
    friend type Get(RedAverage);
};

template struct ExposeMember<RedAverage, &RedQueueDisc::m_qAvg>;

// The same for PRR's delivered and flight-size counters (--prrSackFix below).
struct PrrDelivered
{
    using type = uint32_t TcpPrrRecovery::*;
    friend type Get(PrrDelivered);
};

template struct ExposeMember<PrrDelivered, &TcpPrrRecovery::m_prrDelivered>;

struct PrrFlightSize
{
    using type = uint32_t TcpPrrRecovery::*;
    friend type Get(PrrFlightSize);
};

template struct ExposeMember<PrrFlightSize, &TcpPrrRecovery::m_recoveryFlightSize>;

// ---------------------------------------------------------------------------------------------
// Measurement state (one simulation per process).
struct Window
{
    double start = 60.0; // statistics start [s]
    double end = 240.0;  // statistics end = simulation end [s]

    bool Open() const
    {
        return Simulator::Now().GetSeconds() >= start;
    }
};

Window g_win;

// Raw TCP RTT samples (every Measurement() TCP feeds its estimator), pooled over flows.
double g_rttSum = 0.0;
uint64_t g_rttCount = 0;

// The "RTT" trace of TcpSocketBase (the smoothed estimate, reported when it changes).
double g_srttSum = 0.0;
uint64_t g_srttCount = 0;
// ... and the same smoothed estimate of every flow, read every sampling interval.
std::vector<double> g_srttNow;
double g_srttSampledSum = 0.0;
uint64_t g_srttSampledCount = 0;

// Bottleneck transmitter.
DataRate g_bnRate;
double g_busyS = 0.0;       // busy time inside the window
uint64_t g_bnTxPkts = 0;    // packets that started transmission, whole run
uint64_t g_bnTxPktsWin = 0; // ... inside the window

// Queue samples.
Ptr<QueueDisc> g_qdisc;
Ptr<RedQueueDisc> g_red;
Ptr<Queue<Packet>> g_devQueue; // the 1-packet device queue beneath the discipline
double g_qSum = 0.0;
double g_devSum = 0.0;
double g_avgSum = 0.0;
uint64_t g_qSamples = 0;
double g_sampleInterval = 0.01;

// TCP senders.
std::vector<SequenceNumber32> g_highTx; // per flow: highest data sequence sent + size
std::vector<bool> g_anySent;
uint64_t g_retx = 0;
uint64_t g_timeouts = 0;

// A second RTT measure: for each ACK that advances, the time since the newest segment it
// covers was sent (skipped if that segment was retransmitted). Unlike TCP's own samples, which
// time the oldest covered segment, it leaves out the wait of a delayed ACK for its second
// segment.
struct SentSegment
{
    SequenceNumber32 end;
    double sentAt;
    bool retransmitted;
};

std::vector<std::deque<SentSegment>> g_sent;
double g_rttNewestSum = 0.0;
uint64_t g_rttNewestCount = 0;

// Snapshots at the window start.
QueueDisc::Stats g_statsAtStart;
std::vector<uint64_t> g_rxAtStart;
std::vector<Ptr<PacketSink>> g_sinks;

// ns-3's PRR with two optional changes, for the RED utilization investigation
// (docs/validation.md): every DoRecovery call can be written to the trace, and --prrFreshPipe
// lowers the "bytes in flight" PRR sets cwnd from by the one segment a duplicate ACK without SACK
// takes out of the pipe. ns-3 3.44 refreshes m_bytesInFlight before processing an ACK and only
// afterwards, in DupAck, marks the segment as (Reno-)SACKed, so DoRecovery sets
// cwnd = pipe_before_ack + sndcnt and the sender may send one segment per duplicate ACK even when
// PRR's sndcnt is 0 (RFC 6937 section 3 uses the pipe after the ACK). Without the option the
// behaviour is ns-3's own TcpPrrRecovery.
//
// --prrSackFix: with SACK, ns-3 3.44's DoRecovery still adds one segment to DeliveredData for
// every duplicate ACK (RFC 6937's estimate for connections *without* SACK) on top of the newly
// SACKed bytes the socket already passes, so prr_delivered grows twice as fast as the data
// delivered and PRR sends about one segment per duplicate ACK instead of one per two. The option
// leaves that segment out when SACK is on, as later ns-3 versions do (RFC 6937 section 3).
FILE* g_prrTrace = nullptr;
bool g_prrFreshPipe = false;
bool g_prrSackFix = false;
bool g_sackOn = false;

class TracedPrr : public TcpPrrRecovery
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("aqmlab::TracedPrr")
                                .SetParent<TcpPrrRecovery>()
                                .AddConstructor<TracedPrr>()
                                .SetGroupName("Internet");
        return tid;
    }

    TracedPrr() = default;
    TracedPrr(const TracedPrr& o) = default;

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override
    {
        uint32_t cwndBefore = tcb->m_cWnd.Get();
        uint32_t pipe = tcb->m_bytesInFlight.Get();
        if (g_prrFreshPipe && !g_sackOn && isDupAck && deliveredBytes == 0 &&
            pipe >= tcb->m_segmentSize)
        {
            tcb->m_bytesInFlight = pipe - tcb->m_segmentSize; // the segment this dupack reports
        }
        TcpPrrRecovery* self = this;
        if (g_prrSackFix && g_sackOn && isDupAck &&
            self->*Get(PrrDelivered{}) < self->*Get(PrrFlightSize{}))
        {
            // The base class adds one segment for this duplicate ACK; the SACKed bytes in
            // deliveredBytes already count it. Count it once.
            if (deliveredBytes == 0)
            {
                return; // nothing newly SACKed: RFC 6937 has DeliveredData = 0
            }
            isDupAck = false;
        }
        TcpPrrRecovery::DoRecovery(tcb, deliveredBytes, isDupAck);
        double t = Simulator::Now().GetSeconds();
        if (g_prrTrace && t >= TracedPrr::g_prrTraceStart && t <= TracedPrr::g_prrTraceEnd)
        {
            std::fprintf(g_prrTrace, "%.6f,prr,%u,%u,%d,%u,%u\n", t, pipe, deliveredBytes,
                         isDupAck ? 1 : 0, cwndBefore, tcb->m_cWnd.Get());
        }
    }

    Ptr<TcpRecoveryOps> Fork() override
    {
        return CopyObject<TracedPrr>(this);
    }

    static double g_prrTraceStart;
    static double g_prrTraceEnd;
};

double TracedPrr::g_prrTraceStart = 0;
double TracedPrr::g_prrTraceEnd = 0;

// An RTT estimator that records every raw sample before the usual mean/deviation update.
class SampledRtt : public RttMeanDeviation
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("aqmlab::SampledRtt")
                                .SetParent<RttMeanDeviation>()
                                .SetGroupName("Internet")
                                .AddConstructor<SampledRtt>();
        return tid;
    }

    SampledRtt() = default;
    SampledRtt(const SampledRtt&) = default;

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    void Measurement(Time m) override
    {
        if (g_win.Open())
        {
            g_rttSum += m.GetSeconds();
            ++g_rttCount;
        }
        RttMeanDeviation::Measurement(m);
    }

    Ptr<RttEstimator> Copy() const override
    {
        return CopyObject<SampledRtt>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(SampledRtt);

// ---------------------------------------------------------------------------------------------
// Trace sinks.

void
OnBottleneckTxBegin(Ptr<const Packet> p)
{
    ++g_bnTxPkts;
    double t0 = Simulator::Now().GetSeconds();
    double t1 = t0 + g_bnRate.CalculateBytesTxTime(p->GetSize()).GetSeconds();
    double a = std::max(t0, g_win.start);
    double b = std::min(t1, g_win.end);
    if (b > a)
    {
        g_busyS += b - a;
    }
    if (t0 >= g_win.start)
    {
        ++g_bnTxPktsWin;
    }
}

void TraceRetx(uint32_t flow, uint32_t seq);

void
OnTcpTx(uint32_t flow, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t size = p->GetSize();
    if (size == 0)
    {
        return; // SYN, pure ACK, FIN
    }
    SequenceNumber32 end = h.GetSequenceNumber() + size;
    if (g_anySent[flow] && end <= g_highTx[flow])
    {
        if (g_win.Open())
        {
            ++g_retx;
        }
        TraceRetx(flow, h.GetSequenceNumber().GetValue());
        for (auto& seg : g_sent[flow])
        {
            if (seg.end > h.GetSequenceNumber() && seg.end - size < end)
            {
                seg.retransmitted = true;
            }
        }
    }
    else
    {
        g_highTx[flow] = end;
        g_anySent[flow] = true;
        g_sent[flow].push_back({end, Simulator::Now().GetSeconds(), false});
    }
}

void
OnTcpRx(uint32_t flow, Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (!(h.GetFlags() & TcpHeader::ACK))
    {
        return;
    }
    SequenceNumber32 ack = h.GetAckNumber();
    auto& q = g_sent[flow];
    const SentSegment* newest = nullptr;
    SentSegment last{};
    while (!q.empty() && q.front().end <= ack)
    {
        last = q.front();
        newest = &last;
        q.pop_front();
    }
    if (newest && !newest->retransmitted && g_win.Open())
    {
        g_rttNewestSum += Simulator::Now().GetSeconds() - newest->sentAt;
        ++g_rttNewestCount;
    }
}

// The retransmission timer doubles on expiry (RFC 6298 5.5, capped at 60 s); every other
// update recomputes it from the estimator, floored at MinRto. A doubling is a timeout.
void
OnRto(Time oldRto, Time newRto)
{
    bool doubled = newRto > oldRto && (newRto == oldRto + oldRto || newRto == Seconds(60));
    if (doubled && g_win.Open())
    {
        ++g_timeouts;
    }
}

void
OnSrtt(uint32_t flow, Time, Time now)
{
    g_srttNow[flow] = now.GetSeconds();
    if (g_win.Open())
    {
        g_srttSum += now.GetSeconds();
        ++g_srttCount;
    }
}

// Optional event trace (--trace=FILE): one CSV line per TCP window/state change, per
// discipline drop, and per sampling instant (queue, RED average, every flow's cwnd/ssthresh),
// from --traceStart to --traceEnd. Used to compare loss episodes with aqmlab (docs/validation.md).
FILE* g_trace = nullptr;
double g_traceStart = 0.0;
double g_traceEnd = 0.0;
std::vector<Ptr<TcpSocketBase>> g_sockets;

bool
Tracing()
{
    double t = Simulator::Now().GetSeconds();
    return g_trace && t >= g_traceStart && t <= g_traceEnd;
}

uint32_t
QueueNow()
{
    return g_qdisc->GetNPackets();
}

double
RedAvgNow()
{
    return g_red ? PeekPointer(g_red)->*Get(RedAverage{}) : -1.0;
}

void
TraceLine(const char* kind, int flow, double a, double b)
{
    std::fprintf(g_trace, "%.6f,%s,%d,%.3f,%.3f,%u,%.3f\n", Simulator::Now().GetSeconds(), kind,
                 flow, a, b, QueueNow(), RedAvgNow());
}

void
OnTraceCwnd(uint32_t flow, uint32_t, uint32_t now)
{
    if (Tracing())
    {
        TraceLine("cwnd", flow, now / 1000.0, 0.0);
    }
}

void
OnTraceSsthresh(uint32_t flow, uint32_t, uint32_t now)
{
    if (Tracing())
    {
        TraceLine("ssthresh", flow, now / 1000.0, 0.0);
    }
}

void
OnTraceCongState(uint32_t flow, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (Tracing())
    {
        TraceLine("state", flow, static_cast<double>(now), 0.0);
    }
}

void
OnTraceInFlight(uint32_t flow, uint32_t, uint32_t now)
{
    if (Tracing())
    {
        TraceLine("inflight", flow, now / 1000.0, 0.0);
    }
}

void
OnTraceDrop(Ptr<const QueueDiscItem> item, const char* reason)
{
    if (Tracing())
    {
        Ptr<Packet> p = item->GetPacket()->Copy();
        TcpHeader tcp;
        double seq = -1;
        if (p->PeekHeader(tcp))
        {
            seq = tcp.GetSequenceNumber().GetValue();
        }
        std::fprintf(g_trace, "%.6f,drop,-1,%.0f,0,%u,%.3f,%s\n", Simulator::Now().GetSeconds(),
                     seq, QueueNow(), RedAvgNow(), reason);
    }
}

void
TraceRetx(uint32_t flow, uint32_t seq)
{
    if (Tracing())
    {
        TraceLine("retx", flow, seq, 0.0);
    }
}

void
TraceSample()
{
    if (Tracing())
    {
        TraceLine("queue", -1, g_devQueue->GetNPackets(), 0.0);
    }
    if (Simulator::Now().GetSeconds() < g_traceEnd)
    {
        Simulator::Schedule(Seconds(g_sampleInterval), &TraceSample);
    }
}

void
HookSender(uint32_t flow, Ptr<BulkSendApplication> app, bool pace)
{
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(app->GetSocket());
    NS_ABORT_MSG_UNLESS(s, "flow " << flow << ": no TCP socket yet");
    if (pace)
    {
        s->SetPacingStatus(true); // BBR paces (ns-3's tcp-bbr-example enables pacing)
    }
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTcpTx, flow));
    s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnTcpRx, flow));
    s->TraceConnectWithoutContext("RTO", MakeCallback(&OnRto));
    s->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnSrtt, flow));
    if (g_trace)
    {
        s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnTraceCwnd, flow));
        s->TraceConnectWithoutContext("SlowStartThreshold",
                                      MakeBoundCallback(&OnTraceSsthresh, flow));
        s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnTraceCongState, flow));
        s->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&OnTraceInFlight, flow));
    }
}

void
SampleQueue()
{
    g_qSum += g_qdisc->GetNPackets();
    g_devSum += g_devQueue->GetNPackets();
    if (g_red)
    {
        g_avgSum += PeekPointer(g_red)->*Get(RedAverage{});
    }
    ++g_qSamples;
    for (double r : g_srttNow)
    {
        if (r > 0)
        {
            g_srttSampledSum += r;
            ++g_srttSampledCount;
        }
    }
    Time next = Simulator::Now() + Seconds(g_sampleInterval);
    if (next.GetSeconds() < g_win.end - 1e-12)
    {
        Simulator::Schedule(Seconds(g_sampleInterval), &SampleQueue);
    }
}

void
OpenWindow()
{
    g_statsAtStart = g_qdisc->GetStats();
    for (size_t i = 0; i < g_sinks.size(); ++i)
    {
        g_rxAtStart[i] = g_sinks[i]->GetTotalRx();
    }
    SampleQueue();
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

uint64_t
Delta(const std::map<std::string, uint32_t, std::less<>>& now,
      const std::map<std::string, uint32_t, std::less<>>& before,
      const std::string& key)
{
    auto a = now.find(key);
    auto b = before.find(key);
    uint64_t x = a == now.end() ? 0 : a->second;
    uint64_t y = b == before.end() ? 0 : b->second;
    return x - y;
}

std::string
JsonString(const std::string& s)
{
    std::string out = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

std::string
Num(double x)
{
    if (!std::isfinite(x))
    {
        return "null";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", x);
    return buf;
}

// The queue discipline under test, by name.
// RED's settings (the reference dumbbell's by default; DCTCP's step marking sets
// minTh = maxTh = K, qw = 1, ecn, no hard drop).
struct RedSettings
{
    double minTh = 30;
    double maxTh = 90;
    double qw = 0.002;
    double lInterm = 10;
    bool ecn = false;
    bool hardDrop = true;
    uint32_t meanPktSize = 1040;
};

TrafficControlHelper
BottleneckQdisc(const std::string& name,
                uint32_t limit,
                const std::string& rate,
                double delayS,
                const RedSettings& red)
{
    TrafficControlHelper tch;
    std::string size = std::to_string(limit) + "p";
    if (name == "RED")
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(size)),
                             "MinTh", DoubleValue(red.minTh),
                             "MaxTh", DoubleValue(red.maxTh),
                             "LInterm", DoubleValue(red.lInterm),
                             "QW", DoubleValue(red.qw),
                             "Gentle", BooleanValue(false),
                             "Wait", BooleanValue(true),
                             "MeanPktSize", UintegerValue(red.meanPktSize),
                             "UseEcn", BooleanValue(red.ecn),
                             "UseHardDrop", BooleanValue(red.hardDrop),
                             "LinkBandwidth", DataRateValue(DataRate(rate)),
                             "LinkDelay", TimeValue(Seconds(delayS)));
    }
    else if (name == "DropTail")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(size)));
    }
    else if (name == "CoDel")
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc", "MaxSize", QueueSizeValue(QueueSize(size)));
    }
    else if (name == "PIE")
    {
        tch.SetRootQueueDisc("ns3::PieQueueDisc", "MaxSize", QueueSizeValue(QueueSize(size)));
    }
    else if (name == "FqCoDel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", QueueSizeValue(QueueSize(size)));
    }
    else if (name == "FqPie")
    {
        tch.SetRootQueueDisc("ns3::FqPieQueueDisc", "MaxSize", QueueSizeValue(QueueSize(size)));
    }
    else if (name == "FqCobalt")
    {
        tch.SetRootQueueDisc("ns3::FqCobaltQueueDisc", "MaxSize", QueueSizeValue(QueueSize(size)));
    }
    else
    {
        NS_ABORT_MSG("unknown --qdisc " << name
                                        << "; use RED, DropTail, CoDel, PIE, FqCoDel, FqPie or FqCobalt");
    }
    return tch;
}

} // namespace

int
main(int argc, char* argv[])
{
    auto wall0 = std::chrono::steady_clock::now();

    std::string qdisc = "RED";
    uint32_t flows = 10;
    double duration = 240.0;
    double warmup = 60.0;
    uint32_t run = 1;
    uint32_t seed = 1;
    bool sack = false;
    bool timestamps = false;
    uint32_t iw = 10;
    double minRto = 1.0;
    uint32_t delAck = 2;
    double delAckTimeout = 0.2;
    std::string recovery = "prr";
    uint32_t segment = 1000;
    uint32_t limit = 500;
    uint32_t bufBytes = 2 * 1024 * 1024;
    std::string bnRate = "100Mbps";
    double bnDelay = 0.010;
    std::string accessRate = "1Gbps";
    double accessDelay = 0.001;
    double startSpread = 1.0;
    uint32_t sendSize = 65536;
    std::string cc = "NewReno";
    std::string ccPerFlow;
    bool hystart = false;
    RedSettings red;

    CommandLine cmd(__FILE__);
    cmd.Usage("The aqmlab reference dumbbell in ns-3; prints one JSON line of metrics.");
    cmd.AddValue("qdisc",
                 "bottleneck discipline: RED, DropTail, CoDel, PIE, FqCoDel, FqPie, FqCobalt",
                 qdisc);
    cmd.AddValue("flows", "number of bulk TCP flows N", flows);
    cmd.AddValue("duration", "simulated time [s]", duration);
    cmd.AddValue("warmup", "statistics start [s]", warmup);
    cmd.AddValue("run", "RNG run number", run);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.AddValue("cc",
                 "congestion control of every flow: NewReno, Cubic, Dctcp, Bbr (ns-3 Tcp<name>)",
                 cc);
    cmd.AddValue("ccPerFlow",
                 "comma-separated congestion control per flow (cycled), e.g. Bbr,Cubic; "
                 "receivers use --cc",
                 ccPerFlow);
    cmd.AddValue("hystart", "TcpCubic's HyStart (ns-3 default on; aqmlab has no 2008 HyStart)",
                 hystart);
    cmd.AddValue("redMinTh", "RED MinTh [packets]", red.minTh);
    cmd.AddValue("redMaxTh", "RED MaxTh [packets]", red.maxTh);
    cmd.AddValue("redQw", "RED QW (1: instantaneous queue)", red.qw);
    cmd.AddValue("redLInterm", "RED LInterm (1/max_p)", red.lInterm);
    cmd.AddValue("redEcn", "RED UseEcn: mark ECT packets instead of dropping", red.ecn);
    cmd.AddValue("redHardDrop", "RED UseHardDrop: drop (not mark) when avg >= MaxTh", red.hardDrop);
    cmd.AddValue("meanPktSize", "RED MeanPktSize [bytes] (idle-time decay)", red.meanPktSize);
    cmd.AddValue("sack", "TCP SACK", sack);
    cmd.AddValue("timestamps", "TCP timestamps option", timestamps);
    cmd.AddValue("iw", "initial congestion window [segments]", iw);
    cmd.AddValue("minRto", "minimum RTO [s]", minRto);
    cmd.AddValue("delAck", "ACK every this many in-order segments", delAck);
    cmd.AddValue("delAckTimeout", "delayed-ACK timeout [s]", delAckTimeout);
    cmd.AddValue("recovery", "loss recovery: prr or classic", recovery);
    cmd.AddValue("segment", "TCP payload bytes per segment", segment);
    cmd.AddValue("limit", "bottleneck discipline limit [packets]", limit);
    cmd.AddValue("buffer", "TCP send and receive buffer [bytes]", bufBytes);
    cmd.AddValue("bottleneckRate", "bottleneck rate", bnRate);
    cmd.AddValue("bottleneckDelay", "bottleneck one-way delay [s]", bnDelay);
    cmd.AddValue("accessRate", "access link rate", accessRate);
    cmd.AddValue("accessDelay", "access link one-way delay [s]", accessDelay);
    cmd.AddValue("sendSize",
                 "bytes per BulkSend write into the socket (no effect on segments; small writes "
                 "fill 2 MiB send buffers with many Packet objects: memory and time)",
                 sendSize);
    cmd.AddValue("startSpread", "flows start uniformly in [0, startSpread) s", startSpread);
    cmd.AddValue("sampleInterval", "queue sampling interval [s]", g_sampleInterval);
    std::string tracePath;
    cmd.AddValue("trace",
                 "write a CSV event trace (cwnd, ssthresh, state, drops, queue) to this file",
                 tracePath);
    cmd.AddValue("traceStart", "trace from this time [s]", g_traceStart);
    cmd.AddValue("prrFreshPipe",
                 "PRR without SACK: set cwnd from the pipe after a duplicate ACK, not before it "
                 "(RFC 6937; ns-3 3.44 uses the value before)",
                 g_prrFreshPipe);
    cmd.AddValue("traceEnd", "trace until this time [s]", g_traceEnd);
    cmd.AddValue("prrSackFix",
                 "PRR with SACK: count a duplicate ACK's delivered data once (the SACKed bytes), "
                 "not SACKed bytes + 1 segment as ns-3 3.44 does",
                 g_prrSackFix);
    cmd.Parse(argc, argv);
    if (!tracePath.empty())
    {
        g_trace = std::fopen(tracePath.c_str(), "w");
        NS_ABORT_MSG_UNLESS(g_trace, "cannot write " << tracePath);
        std::fprintf(g_trace, "t,kind,flow,a,b,qdisc_pkts,red_avg\n");
        g_prrTrace = g_trace;
        TracedPrr::g_prrTraceStart = g_traceStart;
        TracedPrr::g_prrTraceEnd = g_traceEnd;
    }
    g_sackOn = sack;

    NS_ABORT_MSG_UNLESS(flows >= 1, "--flows must be at least 1");
    NS_ABORT_MSG_UNLESS(warmup >= 0 && warmup < duration, "--warmup must be in [0, duration)");
    g_win.start = warmup;
    g_win.end = duration;

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    // TCP: NewReno, no SACK, no timestamps, 1000-B segments, IW 10, delayed ACK every 2
    // segments, min RTO 1 s, 2 MiB buffers (the reference setup; all overridable above).
    auto ccType = [](const std::string& name) {
        TypeId tid;
        NS_ABORT_MSG_UNLESS(TypeId::LookupByNameFailSafe("ns3::Tcp" + name, &tid),
                            "unknown congestion control " << name
                                                          << "; use NewReno, Cubic, Dctcp, Bbr");
        return tid;
    };
    std::vector<std::string> flowCc;
    {
        std::stringstream list(ccPerFlow);
        std::string item;
        while (std::getline(list, item, ','))
        {
            if (!item.empty())
            {
                flowCc.push_back(item);
            }
        }
        if (flowCc.empty())
        {
            flowCc.push_back(cc);
        }
        for (const auto& c : flowCc)
        {
            ccType(c);
        }
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccType(cc)));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(hystart));
    if (recovery == "prr")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpPrrRecovery::GetTypeId()));
        if (g_prrFreshPipe || g_prrSackFix || !tracePath.empty())
        {
            Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                               TypeIdValue(TracedPrr::GetTypeId()));
        }
    }
    else if (recovery == "classic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpClassicRecovery::GetTypeId()));
    }
    else
    {
        NS_ABORT_MSG("unknown --recovery " << recovery << "; use prr or classic");
    }
    Config::SetDefault("ns3::TcpL4Protocol::RttEstimatorType",
                       TypeIdValue(SampledRtt::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(iw));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAck));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(delAckTimeout)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));

    // Topology.
    NodeContainer senders;
    NodeContainer receivers;
    NodeContainer routers;
    senders.Create(flows);
    receivers.Create(flows);
    routers.Create(2);
    Ptr<Node> r1 = routers.Get(0);
    Ptr<Node> r2 = routers.Get(1);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", TimeValue(Seconds(accessDelay)));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(bnRate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(Seconds(bnDelay)));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    NetDeviceContainer bnDevs = bottleneck.Install(r1, r2);
    std::vector<NetDeviceContainer> left(flows);
    std::vector<NetDeviceContainer> right(flows);
    for (uint32_t i = 0; i < flows; ++i)
    {
        left[i] = access.Install(senders.Get(i), r1);
        right[i] = access.Install(r2, receivers.Get(i));
    }

    InternetStackHelper stack;
    stack.InstallAll();
    for (uint32_t i = 0; i < flows; ++i)
    {
        senders.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute(
            "SocketType",
            TypeIdValue(ccType(flowCc[i % flowCc.size()])));
    }

    // Disciplines before addresses (address assignment would install ns-3's default one).
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("10000p")));
    TrafficControlHelper aqm = BottleneckQdisc(qdisc, limit, bnRate, bnDelay, red);
    QueueDiscContainer bnQd = aqm.Install(bnDevs.Get(0));
    fifo.Install(bnDevs.Get(1));
    for (uint32_t i = 0; i < flows; ++i)
    {
        fifo.Install(left[i]);
        fifo.Install(right[i]);
    }
    g_qdisc = bnQd.Get(0);
    g_red = DynamicCast<RedQueueDisc>(g_qdisc);

    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    addr.Assign(bnDevs);
    addr.NewNetwork();
    std::vector<Ipv4Address> dst(flows);
    for (uint32_t i = 0; i < flows; ++i)
    {
        addr.Assign(left[i]);
        addr.NewNetwork();
        Ipv4InterfaceContainer ifs = addr.Assign(right[i]);
        addr.NewNetwork();
        dst[i] = ifs.GetAddress(1);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Applications: one bulk sender and one sink per pair.
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetAttribute("Min", DoubleValue(0.0));
    startRv->SetAttribute("Max", DoubleValue(startSpread));
    const uint16_t port = 5000;
    g_highTx.assign(flows, SequenceNumber32(0));
    g_anySent.assign(flows, false);
    g_sent.assign(flows, {});
    g_srttNow.assign(flows, 0.0);
    g_rxAtStart.assign(flows, 0);
    for (uint32_t i = 0; i < flows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(receivers.Get(i));
        sinkApp.Start(Seconds(0));
        sinkApp.Stop(Seconds(duration));
        g_sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dst[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer srcApp = bulk.Install(senders.Get(i));
        double start = startRv->GetValue();
        srcApp.Start(Seconds(start));
        srcApp.Stop(Seconds(duration));
        // The socket exists once the application has started.
        Simulator::Schedule(Seconds(start) + NanoSeconds(1),
                            &HookSender,
                            i,
                            DynamicCast<BulkSendApplication>(srcApp.Get(0)),
                            flowCc[i % flowCc.size()] == "Bbr");
    }

    Ptr<PointToPointNetDevice> bnDev = DynamicCast<PointToPointNetDevice>(bnDevs.Get(0));
    DataRateValue rateValue;
    bnDev->GetAttribute("DataRate", rateValue);
    g_bnRate = rateValue.Get();
    g_devQueue = bnDev->GetQueue();
    bnDev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnBottleneckTxBegin));

    Simulator::Schedule(Seconds(warmup), &OpenWindow);
    if (g_trace)
    {
        g_qdisc->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&OnTraceDrop));
        Simulator::Schedule(Seconds(g_traceStart), &TraceSample);
    }
    Simulator::Stop(Seconds(duration));

    auto wall1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto wall2 = std::chrono::steady_clock::now();
    uint64_t events = Simulator::GetEventCount();

    // Metrics over the window.
    double window = duration - warmup;
    QueueDisc::Stats end = g_qdisc->GetStats();
    const QueueDisc::Stats& beg = g_statsAtStart;
    uint64_t arrivals = end.nTotalReceivedPackets - beg.nTotalReceivedPackets;
    uint64_t drops = end.nTotalDroppedPackets - beg.nTotalDroppedPackets;
    uint64_t marks = end.nTotalMarkedPackets - beg.nTotalMarkedPackets;
    uint64_t early = 0;
    uint64_t forced = 0;
    std::map<std::string, uint64_t> reasons;
    auto classify = [&](const std::map<std::string, uint32_t, std::less<>>& now,
                        const std::map<std::string, uint32_t, std::less<>>& before) {
        for (const auto& [reason, count] : now)
        {
            uint64_t n = Delta(now, before, reason);
            if (n == 0)
            {
                continue;
            }
            reasons[reason] += n;
            // Probabilistic or AQM-decided drops, also when a child discipline (FQ-CoDel's
            // per-flow CoDel) made them.
            bool isEarly = reason.find("Unforced drop") != std::string::npos ||
                           reason.find("Target exceeded drop") != std::string::npos;
            // RED's avg >= max_th rule. (PIE's "Forced drop" is its buffer overflow.)
            bool isForced = g_red && reason == RedQueueDisc::FORCED_DROP;
            if (isEarly)
            {
                early += n;
            }
            else if (isForced)
            {
                forced += n;
            }
        }
    };
    classify(end.nDroppedPacketsBeforeEnqueue, beg.nDroppedPacketsBeforeEnqueue);
    classify(end.nDroppedPacketsAfterDequeue, beg.nDroppedPacketsAfterDequeue);

    std::vector<double> goodput(flows);
    for (uint32_t i = 0; i < flows; ++i)
    {
        goodput[i] = (g_sinks[i]->GetTotalRx() - g_rxAtStart[i]) * 8.0 / window / 1e6;
    }
    double gSum = 0.0;
    double gSq = 0.0;
    for (double g : goodput)
    {
        gSum += g;
        gSq += g * g;
    }
    double gMean = gSum / flows;
    double gMin = *std::min_element(goodput.begin(), goodput.end());
    double gMax = *std::max_element(goodput.begin(), goodput.end());
    double jain = gSq > 0 ? gSum * gSum / (flows * gSq) : NAN;

    double util = g_busyS / window;
    double meanQ = g_qSamples ? g_qSum / g_qSamples : NAN;
    double redAvg = (g_red && g_qSamples) ? g_avgSum / g_qSamples : NAN;
    // Mean waiting time of a packet by Little's law: the time-average queue over the arrival
    // rate, which (no drops beyond the window's few) is utilization x capacity in packets/s.
    double txS = (segment + 40 + (timestamps ? 12 : 0) + 2) * 8.0 / g_bnRate.GetBitRate();
    double queueDelayMs = util > 0 ? meanQ * txS / util * 1e3 : NAN;

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    auto wall3 = std::chrono::steady_clock::now();
    auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };

    std::ostringstream o;
    o << "{\"simulator\":\"ns-3\",\"ns3_version\":\"3.44\""
      << ",\"qdisc\":" << JsonString(qdisc) << ",\"flows\":" << flows << ",\"rng_run\":" << run
      << ",\"seed\":" << seed << ",\"duration_s\":" << Num(duration)
      << ",\"warmup_s\":" << Num(warmup) << ",\"utilization_pct\":" << Num(util * 100)
      << ",\"mean_queue_pkts\":" << Num(meanQ)
      << ",\"mean_device_queue_pkts\":" << Num(g_qSamples ? g_devSum / g_qSamples : NAN) << ",\"red_avg_queue_pkts\":" << Num(redAvg)
      << ",\"arrivals\":" << arrivals << ",\"drops\":" << drops << ",\"early_drops\":" << early
      << ",\"forced_drops\":" << forced << ",\"marks\":" << marks
      << ",\"drop_fraction\":" << Num(arrivals ? double(drops) / arrivals : NAN)
      << ",\"goodput_mean_mbps\":" << Num(gMean) << ",\"goodput_min_mbps\":" << Num(gMin)
      << ",\"goodput_max_mbps\":" << Num(gMax) << ",\"jain_index\":" << Num(jain)
      << ",\"goodput_per_flow_mbps\":[";
    for (uint32_t i = 0; i < flows; ++i)
    {
        o << (i ? "," : "") << Num(goodput[i]);
    }
    o << "]"
      << ",\"mean_rtt_ms\":" << Num(g_rttCount ? g_rttSum / g_rttCount * 1e3 : NAN)
      << ",\"rtt_samples\":" << g_rttCount
      << ",\"mean_rtt_newest_ms\":" << Num(g_rttNewestCount ? g_rttNewestSum / g_rttNewestCount * 1e3 : NAN)
      << ",\"mean_srtt_ms\":" << Num(g_srttCount ? g_srttSum / g_srttCount * 1e3 : NAN)
      << ",\"mean_srtt_sampled_ms\":"
      << Num(g_srttSampledCount ? g_srttSampledSum / g_srttSampledCount * 1e3 : NAN)
      << ",\"queue_delay_ms\":" << Num(queueDelayMs) << ",\"tcp_retransmissions\":" << g_retx
      << ",\"tcp_timeouts\":" << g_timeouts << ",\"drop_reasons\":{";
    bool first = true;
    for (const auto& [reason, n] : reasons)
    {
        o << (first ? "" : ",") << JsonString(reason) << ":" << n;
        first = false;
    }
    o << "},\"bottleneck_tx_pkts\":" << g_bnTxPkts
      << ",\"bottleneck_tx_pkts_window\":" << g_bnTxPktsWin << ",\"events\":" << events
      << ",\"setup_wall_s\":" << Num(secs(wall0, wall1))
      << ",\"run_wall_s\":" << Num(secs(wall1, wall2))
      << ",\"wall_s\":" << Num(secs(wall0, wall3)) << ",\"cpu_s\":" << Num(ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6)
      << ",\"peak_rss_kb\":" << ru.ru_maxrss
      << ",\"tcp\":{\"cc\":" << JsonString(cc) << ",\"cc_per_flow\":" << JsonString(ccPerFlow)
      << ",\"hystart\":" << (hystart ? "true" : "false") << ",\"recovery\":" << JsonString(recovery)
      << ",\"sack\":" << (sack ? "true" : "false")
      << ",\"timestamps\":" << (timestamps ? "true" : "false") << ",\"iw\":" << iw
      << ",\"min_rto_s\":" << Num(minRto) << ",\"del_ack_count\":" << delAck
      << ",\"del_ack_timeout_s\":" << Num(delAckTimeout) << ",\"segment\":" << segment
      << ",\"buffer_bytes\":" << bufBytes << ",\"send_size\":" << sendSize << "}"
      << ",\"red\":{\"min_th\":" << Num(red.minTh) << ",\"max_th\":" << Num(red.maxTh)
      << ",\"qw\":" << Num(red.qw) << ",\"linterm\":" << Num(red.lInterm)
      << ",\"ecn\":" << (red.ecn ? "true" : "false")
      << ",\"hard_drop\":" << (red.hardDrop ? "true" : "false")
      << ",\"mean_pkt_size\":" << red.meanPktSize << "}}";
    std::printf("%s\n", o.str().c_str());
    std::fflush(stdout);

    Simulator::Destroy();
    if (g_trace)
    {
        std::fclose(g_trace);
    }
    return 0;
}
