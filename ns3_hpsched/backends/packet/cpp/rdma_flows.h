// RDMA transport (RoCEv2-style queue pairs) with DCQCN and go-back-N, over ns-3 UDP.
//
// One queue pair per flow. The sender paces UDP datagrams (RdmaHeader + payload) at its
// current rate, starting at the NIC's line rate; it does not put a packet into a NIC band
// that already holds one (or is paused by PFC), as a NIC's QP scheduler would not. The
// receiver delivers in-order bytes to the Session, ACKs every ``ackInterval`` packets and
// the last one, NACKs the expected sequence on a gap (again after ``nackIntervalS`` if the
// gap persists), and returns a CNP for a CE-marked packet at most once per
// ``cnpIntervalS``. The sender goes back to the NACKed sequence (go-back-N), and to the
// oldest unacknowledged byte when nothing was acknowledged for ``rtoS`` (a lost tail).
//
// DCQCN reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA
// Deployments", SIGCOMM 2015, section 3): on a CNP, Rt = Rc, Rc *= 1 - alpha/2,
// where Rt = Rc is skipped if the rate timer has not fired since the last cut (NVIDIA
// ConnectX defaults clamp_tgt_rate = 0, clamp_tgt_rate_after_time_inc = 1, as in the
// HPCC simulator's RdmaHw::CheckRateDecreaseMlx: a burst of CNPs does not lower Rt twice);
// alpha = (1 - g) alpha + g; alpha decays by (1 - g) every alphaTimer without CNP; a rate
// timer and a byte counter each advance a stage counter, and each advance sets
// Rc = (Rt + Rc) / 2 after raising Rt by nothing (fast recovery, both counters < F),
// R_AI (additive) or i * R_HAI (hyper increase, both counters > F, i = min - F).
//
// Data is ECT(0) in the flow's class (DSCP = class); ACK, NACK and CNP are not-ECT in
// class 0, the highest, so feedback is never queued behind data of lower classes.
// Packets carry the flow's five-tuple with protocol UDP (17), so the ECMP router hashes
// them exactly as topology.ecmp.flow_hash does for that tuple. They are sent through
// ns-3's UDP and received by RdmaReceiver, which hands them over by QP number.
#ifndef HPSCHED_RDMA_FLOWS_H
#define HPSCHED_RDMA_FLOWS_H

#include "ecmp_routing.h"
#include "fabric.h"
#include "pfc.h"
#include "rdma_band.h"
#include "rdma_header.h"
#include "session.h"

#include "ns3/internet-module.h"
#include "ns3/point-to-point-net-device.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

namespace hpsched
{

/// Transport parameters (set from Python; see ns3_hpsched/transports/rdma.py).
struct RdmaConfig
{
    uint32_t mtu{9000};
    uint32_t nBands{8};
    uint32_t ackInterval{8};
    double rtoS{1e-3};
    double nackIntervalS{500e-6};
    bool dcqcn{true};
    double g{1.0 / 256};
    double alphaTimerS{55e-6};
    double rateTimerS{55e-6};
    uint64_t byteCounter{10000000};
    uint32_t fastRecoverySteps{5};
    double rateAiBps{50e6};
    double rateHaiBps{100e6};
    double minRateBps{100e6};
    double cnpIntervalS{50e-6};
    bool pfc{true};
    uint64_t xoffBytes{0};
    uint64_t xonBytes{0};
};

/// Hands a host's UDP datagrams to one handler, in place of UDP's endpoint demux.
///
/// ns-3's UdpL4Protocol finds a datagram's socket by scanning a list of every endpoint of
/// the host, per packet; with an endpoint per queue pair and port, that scan grew with
/// the flows a host ever had (3.7% of the CPU of 8k Hadoop-sized flows on 128 hosts).
/// Installed as the host's IPv4 protocol 17 (UDP sending is untouched), it strips the UDP
/// header and calls the handler directly, as the endpoint's receive callback was called.
class RdmaReceiver : public ns3::IpL4Protocol
{
  public:
    using Handler = std::function<void(ns3::Ptr<ns3::Packet>, const ns3::Ipv4Header&)>;

    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("hpsched::RdmaReceiver").SetParent<ns3::IpL4Protocol>();
        return tid;
    }

    void SetHandler(Handler handler)
    {
        m_handler = std::move(handler);
    }

    int GetProtocolNumber() const override
    {
        return ns3::UdpL4Protocol::PROT_NUMBER;
    }

    RxStatus Receive(ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header& header, ns3::Ptr<ns3::Ipv4Interface>) override
    {
        ns3::UdpHeader udp;
        p->RemoveHeader(udp);
        m_handler(p, header);
        return RX_OK;
    }

    RxStatus Receive(ns3::Ptr<ns3::Packet>, const ns3::Ipv6Header&, ns3::Ptr<ns3::Ipv6Interface>) override
    {
        return RX_ENDPOINT_UNREACH;  // the fabric is IPv4 only
    }

    void SetDownTarget(DownTargetCallback cb) override
    {
        m_down = cb;
    }

    void SetDownTarget6(DownTargetCallback6 cb) override
    {
        m_down6 = cb;
    }

    DownTargetCallback GetDownTarget() const override
    {
        return m_down;
    }

    DownTargetCallback6 GetDownTarget6() const override
    {
        return m_down6;
    }

  private:
    Handler m_handler;
    DownTargetCallback m_down;
    DownTargetCallback6 m_down6;
};

class RdmaFlows
{
  public:
    RdmaFlows(Fabric& fabric, Session& session, const RdmaConfig& cfg)
        : m_fabric(fabric),
          m_session(session),
          m_cfg(cfg),
          m_payload(cfg.mtu - 20 - 8 - RdmaHeader::SIZE)
    {
        RdmaHeader::GetTypeId();
        PfcIngressTag::GetTypeId();
        m_hostPort.assign(fabric.GetNHosts(), 0);
        uint64_t run = ns3::RngSeedManager::GetRun();
        for (uint32_t p = 0; p < fabric.NPorts(); ++p)
        {
            uint32_t node = fabric.GetDevice(p)->GetNode()->GetId();
            if (node < fabric.GetNHosts())
            {
                m_hostPort[node] = p;
            }
            auto root = fabric.GetQueueDisc(p);
            for (uint32_t b = 0; b < root->GetNQueueDiscClasses(); ++b)
            {
                auto band = ns3::DynamicCast<RdmaBandQueueDisc>(root->GetQueueDiscClass(b)->GetQueueDisc());
                band->SetSeed(Mix64((run << 32) ^ (uint64_t(p) << 8) ^ b));
            }
        }
        if (cfg.pfc)
        {
            m_pfc = std::make_unique<Pfc>(fabric, cfg.nBands, cfg.xoffBytes, cfg.xonBytes);
        }
        for (uint32_t h = 0; h < fabric.GetNHosts(); ++h)
        {
            auto receiver = ns3::CreateObject<RdmaReceiver>();
            receiver->SetHandler([this](ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header& header) {
                Receive(p, header);
            });
            fabric.GetNode(h)->GetObject<ns3::Ipv4L3Protocol>()->Insert(receiver);
        }
    }

    /// Register flow ``id`` and start it at absolute time ``timeS`` (or now; ``ahead``:
    /// see Session::ScheduleOpen).
    void StartFlow(double timeS,
                   bool ahead,
                   int64_t id,
                   uint32_t src,
                   uint32_t dst,
                   uint64_t size,
                   uint8_t cls,
                   int64_t coflow,
                   uint16_t sport,
                   uint16_t dport)
    {
        uint32_t idx = m_session.AddFlow(id, src, dst, size, cls, coflow);
        m_qps.resize(idx + 1);
        Qp& q = m_qps[idx];
        q.idx = idx;
        q.sport = sport;
        q.dport = dport;
        Session::ScheduleOpen(timeS, ahead, src, [this, idx] { Open(idx); });
    }

    /// Per port: PAUSE frames received and seconds paused (zeros without PFC).
    void PortStats(uint64_t* pauses, double* pausedS) const
    {
        if (m_pfc)
        {
            m_pfc->PortStats(pauses, pausedS);
            return;
        }
        std::fill(pauses, pauses + m_fabric.NPorts(), 0);
        std::fill(pausedS, pausedS + m_fabric.NPorts(), 0.0);
    }

    /// PAUSE frames received by ``port`` for ``band`` (0 without PFC).
    uint64_t Pauses(uint32_t port, uint32_t band) const
    {
        return m_pfc ? m_pfc->Pauses(port, band) : 0;
    }

    /// The PFC state of the fabric (nullptr without PFC).
    Pfc* GetPfc() const
    {
        return m_pfc.get();
    }

    /// Retransmitted data bytes (go-back-N) over all flows.
    uint64_t RetransmittedBytes() const
    {
        return m_retransmitted;
    }

  private:
    struct Qp
    {
        uint32_t idx{0};
        uint16_t sport{0};
        uint16_t dport{0};
        bool open{false};
        bool acked{false};
        // sender
        uint64_t sndNxt{0};
        uint64_t sndUna{0};
        uint64_t highest{0};
        double line{0};
        double rc{0};
        double rt{0};
        double alpha{1.0};
        bool cut{false};
        uint32_t timerStage{0};
        uint32_t byteStage{0};
        uint64_t stageBytes{0};
        ns3::EventId sendEv;
        ns3::EventId rtoEv;
        ns3::EventId alphaEv;
        ns3::EventId rateEv;
        // receiver
        uint64_t expected{0};
        uint32_t unacked{0};
        uint64_t nacked{UINT64_MAX};
        double nackS{-1};
        double cnpS{-1};
    };

    void Open(uint32_t idx)
    {
        FlowRecord& f = m_session.Flow(idx);
        Qp& q = m_qps[idx];
        f.startS = ns3::Simulator::Now().GetSeconds();
        auto nic = ns3::DynamicCast<ns3::PointToPointNetDevice>(m_fabric.GetDevice(m_hostPort[f.src]));
        ns3::DataRateValue rate;
        nic->GetAttribute("DataRate", rate);
        q.line = q.rc = q.rt = double(rate.Get().GetBitRate());
        q.open = true;
        SendData(idx);
    }

    /// A datagram reached its host (through RdmaReceiver): dispatched by its QP number.
    void Receive(ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header& h)
    {
        RdmaHeader hdr;
        p->RemoveHeader(hdr);
        uint32_t idx = hdr.GetQp();
        switch (hdr.GetOpcode())
        {
        case RdmaHeader::DATA:
            OnData(idx, hdr.GetSeq(), p->GetSize(), h.GetEcn() == ns3::Ipv4Header::ECN_CE);
            break;
        case RdmaHeader::ACK:
            OnAck(idx, hdr.GetSeq());
            break;
        case RdmaHeader::NACK:
            OnNack(idx, hdr.GetSeq());
            break;
        case RdmaHeader::CNP:
            OnCnp(idx);
            break;
        }
    }

    // -- sender -------------------------------------------------------------------------

    /// Send the next data packet if the NIC band has room; pace the one after.
    void SendData(uint32_t idx)
    {
        Qp& q = m_qps[idx];
        const FlowRecord& f = m_session.Flow(idx);
        if (q.acked || q.sndNxt >= f.size)
        {
            return;
        }
        uint8_t cls = f.cls;
        auto band = ns3::DynamicCast<RdmaBandQueueDisc>(
            m_fabric.GetQueueDisc(m_hostPort[f.src])->GetQueueDiscClass(cls < m_cfg.nBands ? cls : 0)->GetQueueDisc());
        if (band->IsPaused() || band->GetNPackets() > 0)
        {
            // the NIC is busy with this class (or paused): look again after one packet time
            q.sendEv = ns3::Simulator::Schedule(ns3::Seconds(WireBits(m_payload) / q.line),
                                                &RdmaFlows::SendData, this, idx);
            return;
        }
        uint32_t len = uint32_t(std::min<uint64_t>(m_payload, f.size - q.sndNxt));
        auto p = ns3::Create<ns3::Packet>(len);
        p->AddHeader(RdmaHeader(RdmaHeader::DATA, idx, q.sndNxt));
        ns3::SocketIpTosTag tos;
        tos.SetTos(uint8_t(cls << 2) | ns3::Ipv4Header::ECN_ECT0);
        p->AddPacketTag(tos);
        m_fabric.GetNode(f.src)->GetObject<ns3::UdpL4Protocol>()->Send(
            p, ns3::Ipv4Address(HOST_IP_BASE + f.src), ns3::Ipv4Address(HOST_IP_BASE + f.dst), q.sport, q.dport);
        if (q.sndNxt < q.highest)
        {
            m_retransmitted += len;
        }
        q.sndNxt += len;
        q.highest = std::max(q.highest, q.sndNxt);
        if (!q.rtoEv.IsPending())
        {
            q.rtoEv = ns3::Simulator::Schedule(ns3::Seconds(m_cfg.rtoS), &RdmaFlows::Timeout, this, idx);
        }
        CountBytes(idx, len);
        if (q.sndNxt < f.size)
        {
            q.sendEv = ns3::Simulator::Schedule(ns3::Seconds(WireBits(len) / q.rc), &RdmaFlows::SendData, this, idx);
        }
    }

    /// Bits on the wire for a payload: + RDMA header, UDP, IPv4, PPP.
    static double WireBits(uint32_t payload)
    {
        return 8.0 * (payload + RdmaHeader::SIZE + 8 + 20 + 2);
    }

    void OnAck(uint32_t idx, uint64_t seq)
    {
        Qp& q = m_qps[idx];
        if (seq <= q.sndUna || q.acked)
        {
            return;
        }
        q.sndUna = seq;
        q.sndNxt = std::max(q.sndNxt, seq);
        RestartRto(idx);
        if (q.sndUna >= m_session.Flow(idx).size)
        {
            q.acked = true; // the queue pair is done: stop every timer
            q.sendEv.Cancel();
            q.rtoEv.Cancel();
            q.alphaEv.Cancel();
            q.rateEv.Cancel();
        }
    }

    void OnNack(uint32_t idx, uint64_t seq)
    {
        Qp& q = m_qps[idx];
        if (seq < q.sndUna || q.acked)
        {
            return;
        }
        q.sndUna = seq;
        GoBack(idx, seq);
    }

    void Timeout(uint32_t idx)
    {
        Qp& q = m_qps[idx];
        if (!q.acked)
        {
            GoBack(idx, q.sndUna);
        }
    }

    /// Go-back-N: resend everything from ``seq``.
    void GoBack(uint32_t idx, uint64_t seq)
    {
        Qp& q = m_qps[idx];
        q.sndNxt = seq;
        RestartRto(idx);
        if (!q.sendEv.IsPending())
        {
            q.sendEv = ns3::Simulator::ScheduleNow(&RdmaFlows::SendData, this, idx);
        }
    }

    void RestartRto(uint32_t idx)
    {
        Qp& q = m_qps[idx];
        q.rtoEv.Cancel();
        q.rtoEv = ns3::Simulator::Schedule(ns3::Seconds(m_cfg.rtoS), &RdmaFlows::Timeout, this, idx);
    }

    // -- DCQCN reaction point -----------------------------------------------------------

    void OnCnp(uint32_t idx)
    {
        Qp& q = m_qps[idx];
        if (!m_cfg.dcqcn || q.acked)
        {
            return;
        }
        if (q.timerStage > 0)
        {
            q.rt = q.rc; // clamp the target only after a timer increase (see the file comment)
        }
        q.rc = std::max(m_cfg.minRateBps, q.rc * (1 - q.alpha / 2));
        q.alpha = (1 - m_cfg.g) * q.alpha + m_cfg.g;
        q.cut = true;
        q.timerStage = q.byteStage = 0;
        q.stageBytes = 0;
        q.alphaEv.Cancel();
        q.alphaEv = ns3::Simulator::Schedule(ns3::Seconds(m_cfg.alphaTimerS), &RdmaFlows::AlphaTimer, this, idx);
        q.rateEv.Cancel();
        q.rateEv = ns3::Simulator::Schedule(ns3::Seconds(m_cfg.rateTimerS), &RdmaFlows::RateTimer, this, idx);
    }

    void AlphaTimer(uint32_t idx)
    {
        Qp& q = m_qps[idx];
        q.alpha *= 1 - m_cfg.g;
        q.alphaEv = ns3::Simulator::Schedule(ns3::Seconds(m_cfg.alphaTimerS), &RdmaFlows::AlphaTimer, this, idx);
    }

    void RateTimer(uint32_t idx)
    {
        Qp& q = m_qps[idx];
        ++q.timerStage;
        Increase(q);
        if (q.rc < q.line)
        {
            q.rateEv = ns3::Simulator::Schedule(ns3::Seconds(m_cfg.rateTimerS), &RdmaFlows::RateTimer, this, idx);
        }
    }

    void CountBytes(uint32_t idx, uint32_t len)
    {
        Qp& q = m_qps[idx];
        if (!q.cut || q.rc >= q.line)
        {
            return;
        }
        q.stageBytes += len;
        if (q.stageBytes >= m_cfg.byteCounter)
        {
            q.stageBytes = 0;
            ++q.byteStage;
            Increase(q);
        }
    }

    void Increase(Qp& q)
    {
        uint32_t lo = std::min(q.timerStage, q.byteStage);
        uint32_t hi = std::max(q.timerStage, q.byteStage);
        uint32_t f = m_cfg.fastRecoverySteps;
        if (lo > f)
        {
            q.rt += (lo - f) * m_cfg.rateHaiBps; // hyper increase
        }
        else if (hi >= f)
        {
            q.rt += m_cfg.rateAiBps; // additive increase
        }
        q.rt = std::min(q.rt, q.line);
        q.rc = std::min((q.rt + q.rc) / 2, q.line);
    }

    // -- receiver -----------------------------------------------------------------------

    void OnData(uint32_t idx, uint64_t seq, uint32_t len, bool ce)
    {
        Qp& q = m_qps[idx];
        const FlowRecord& f = m_session.Flow(idx);
        double now = ns3::Simulator::Now().GetSeconds();
        if (ce && m_cfg.dcqcn && (q.cnpS < 0 || now - q.cnpS >= m_cfg.cnpIntervalS))
        {
            q.cnpS = now;
            SendControl(idx, RdmaHeader::CNP, 0);
        }
        if (seq == q.expected)
        {
            q.expected += len;
            m_session.Delivered(idx, len);
            if (++q.unacked >= m_cfg.ackInterval || q.expected >= f.size)
            {
                q.unacked = 0;
                SendControl(idx, RdmaHeader::ACK, q.expected);
            }
        }
        else if (seq > q.expected)
        {
            if (q.nacked != q.expected || now - q.nackS >= m_cfg.nackIntervalS)
            {
                q.nacked = q.expected;
                q.nackS = now;
                SendControl(idx, RdmaHeader::NACK, q.expected);
            }
        }
        else if (seq + len >= f.size)
        {
            SendControl(idx, RdmaHeader::ACK, q.expected); // a resent tail: its ACK was lost
        }
    }

    /// Receiver -> sender feedback: not ECN-capable, in class 0.
    void SendControl(uint32_t idx, RdmaHeader::Opcode op, uint64_t seq)
    {
        const FlowRecord& f = m_session.Flow(idx);
        const Qp& q = m_qps[idx];
        auto p = ns3::Create<ns3::Packet>(0);
        p->AddHeader(RdmaHeader(op, idx, seq));
        ns3::SocketIpTosTag tos;
        tos.SetTos(0);
        p->AddPacketTag(tos);
        m_fabric.GetNode(f.dst)->GetObject<ns3::UdpL4Protocol>()->Send(
            p, ns3::Ipv4Address(HOST_IP_BASE + f.dst), ns3::Ipv4Address(HOST_IP_BASE + f.src), q.dport, q.sport);
    }

    Fabric& m_fabric;
    Session& m_session;
    RdmaConfig m_cfg;
    uint32_t m_payload;
    std::vector<uint32_t> m_hostPort;
    std::vector<Qp> m_qps;
    std::unique_ptr<Pfc> m_pfc;
    uint64_t m_retransmitted{0};
};

} // namespace hpsched

#endif
