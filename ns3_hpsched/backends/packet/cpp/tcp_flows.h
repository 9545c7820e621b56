// TCP transport: starts TCP flows of given size between hosts (from scheduled events:
// connecting before Simulator::Run segfaulted), counts delivered bytes at the receiver
// into the Session, and stamps each flow's class as DSCP on data and ACK packets BELOW
// TCP (intercepting TcpL4Protocol's down target), keeping the ECN bits that
// Socket::SetIpTos would clear (with them cleared, DCTCP gets drops instead of marks).
#ifndef HPSCHED_TCP_FLOWS_H
#define HPSCHED_TCP_FLOWS_H

#include "ecmp_routing.h"
#include "fabric.h"
#include "session.h"

#include "ns3/internet-module.h"

#include <unordered_map>

namespace hpsched
{

/// ns-3's TcpSocketBase with one guard: ns-3 3.44 can return from CA_CWR (entered on an
/// ECN echo, i.e. with DCTCP) to CA_OPEN with duplicate ACKs still counted; the next
/// duplicate ACK then fails the assertion ``m_dupAckCount == 1`` in DupAck and aborts the
/// run (seen when a priority change or a drop reorders a DCTCP flow). In CA_OPEN no
/// duplicate ACK is outstanding by definition, so the count is cleared before each ACK.
class GuardedTcpSocket : public ns3::TcpSocketBase
{
  public:
    /// A sender socket on ``node`` with the congestion control, recovery and RTT
    /// estimator types the node's TcpL4Protocol is configured with (as CreateSocket does).
    static ns3::Ptr<GuardedTcpSocket> Create(ns3::Ptr<ns3::Node> node)
    {
        auto tcp = node->GetObject<ns3::TcpL4Protocol>();
        auto make = [&tcp](const char* attribute) {
            ns3::TypeIdValue type;
            tcp->GetAttribute(attribute, type);
            ns3::ObjectFactory factory;
            factory.SetTypeId(type.Get());
            return factory;
        };
        auto socket = ns3::CreateObject<GuardedTcpSocket>();
        socket->SetNode(node);
        socket->SetTcp(tcp);
        socket->SetRtt(make("RttEstimatorType").Create<ns3::RttEstimator>());
        socket->SetCongestionControlAlgorithm(make("SocketType").Create<ns3::TcpCongestionOps>());
        socket->SetRecoveryAlgorithm(make("RecoveryType").Create<ns3::TcpRecoveryOps>());
        tcp->AddSocket(socket);
        return socket;
    }

  protected:
    void ProcessAck(const ns3::SequenceNumber32& ackNumber,
                    bool scoreboardUpdated,
                    uint32_t currentDelivered,
                    const ns3::SequenceNumber32& oldHeadSequence,
                    bool receivedData) override
    {
        if (m_tcb->m_congState == ns3::TcpSocketState::CA_OPEN)
        {
            m_dupAckCount = 0;
        }
        ns3::TcpSocketBase::ProcessAck(ackNumber,
                                       scoreboardUpdated,
                                       currentDelivered,
                                       oldHeadSequence,
                                       receivedData);
    }

    ns3::Ptr<ns3::TcpSocketBase> Fork() override
    {
        return ns3::CopyObject<GuardedTcpSocket>(this);
    }
};

class TcpFlows
{
  public:
    TcpFlows(Fabric& fabric, Session& session)
        : m_fabric(fabric),
          m_session(session)
    {
        for (uint32_t h = 0; h < fabric.GetNHosts(); ++h)
        {
            InterceptDownTarget(fabric.GetNode(h));
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
        m_byTuple[TupleKey(HOST_IP_BASE + src, HOST_IP_BASE + dst, sport, dport)] = idx;
        m_sockets.resize(idx + 1);
        m_sockets[idx].sport = sport;
        m_sockets[idx].dport = dport;
        Session::ScheduleOpen(timeS, ahead, src, [this, idx] { Open(idx); });
    }

  private:
    struct Sockets
    {
        ns3::Ptr<ns3::Socket> tx;
        ns3::Ptr<ns3::Socket> rx;
        uint64_t queued{0};
        uint16_t sport{0};
        uint16_t dport{0};
    };

    static std::pair<uint64_t, uint32_t> TupleKey(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp)
    {
        return {(uint64_t(s) << 32) | d, (uint32_t(sp) << 16) | dp};
    }

    struct TupleHash
    {
        size_t operator()(const std::pair<uint64_t, uint32_t>& k) const
        {
            return size_t(Mix64(k.first ^ (uint64_t(k.second) << 7)));
        }
    };

    void Open(uint32_t idx)
    {
        FlowRecord& f = m_session.Flow(idx);
        Sockets& s = m_sockets[idx];
        f.startS = ns3::Simulator::Now().GetSeconds();
        Listen(f.dst, s.dport);
        s.tx = GuardedTcpSocket::Create(m_fabric.GetNode(f.src));
        s.tx->Bind(ns3::InetSocketAddress(ns3::Ipv4Address(HOST_IP_BASE + f.src), s.sport));
        s.tx->SetConnectCallback(
            ns3::Callback<void, ns3::Ptr<ns3::Socket>>([this, idx](ns3::Ptr<ns3::Socket>) { Pump(idx); }),
            ns3::Callback<void, ns3::Ptr<ns3::Socket>>([](ns3::Ptr<ns3::Socket>) {}));
        s.tx->SetSendCallback(ns3::Callback<void, ns3::Ptr<ns3::Socket>, uint32_t>(
            [this, idx](ns3::Ptr<ns3::Socket>, uint32_t) { Pump(idx); }));
        s.tx->Connect(ns3::InetSocketAddress(ns3::Ipv4Address(HOST_IP_BASE + f.dst), s.dport));
    }

    /// Hand the sender's TCP as many bytes as its buffer takes; close once all are given.
    void Pump(uint32_t idx)
    {
        Sockets& s = m_sockets[idx];
        uint64_t size = m_session.Flow(idx).size;
        if (!s.tx)
        {
            return;
        }
        while (s.queued < size)
        {
            uint64_t n = std::min<uint64_t>(s.tx->GetTxAvailable(), size - s.queued);
            if (n == 0)
            {
                return;
            }
            int sent = s.tx->Send(ns3::Create<ns3::Packet>(uint32_t(n)));
            if (sent <= 0)
            {
                return;
            }
            s.queued += uint64_t(sent);
        }
        s.tx->Close();
        s.tx = nullptr; // TCP keeps the socket alive until it has finished
    }

    /// One listening socket per (host, port), created on first use.
    void Listen(uint32_t host, uint16_t port)
    {
        uint64_t key = (uint64_t(host) << 16) | port;
        if (m_listeners.count(key))
        {
            return;
        }
        auto sock = ns3::Socket::CreateSocket(m_fabric.GetNode(host), ns3::TcpSocketFactory::GetTypeId());
        sock->Bind(ns3::InetSocketAddress(ns3::Ipv4Address(HOST_IP_BASE + host), port));
        sock->Listen();
        sock->SetAcceptCallback(
            ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
            ns3::Callback<void, ns3::Ptr<ns3::Socket>, const ns3::Address&>(
                [this, host, port](ns3::Ptr<ns3::Socket> s, const ns3::Address& from) {
                    Accepted(s, from, host, port);
                }));
        m_listeners[key] = sock;
    }

    void Accepted(ns3::Ptr<ns3::Socket> sock, const ns3::Address& from, uint32_t host, uint16_t port)
    {
        auto peer = ns3::InetSocketAddress::ConvertFrom(from);
        auto it = m_byTuple.find(TupleKey(peer.GetIpv4().Get(), HOST_IP_BASE + host, peer.GetPort(), port));
        if (it == m_byTuple.end())
        {
            return;
        }
        uint32_t idx = it->second;
        m_sockets[idx].rx = sock;
        sock->SetRecvCallback(
            ns3::Callback<void, ns3::Ptr<ns3::Socket>>([this, idx](ns3::Ptr<ns3::Socket> s) { Receive(idx, s); }));
    }

    void Receive(uint32_t idx, ns3::Ptr<ns3::Socket> sock)
    {
        uint64_t bytes = 0;
        while (auto p = sock->Recv())
        {
            if (p->GetSize() == 0)
            {
                break;
            }
            bytes += p->GetSize();
        }
        m_session.Delivered(idx, bytes);
        if (m_session.Flow(idx).finishS >= 0 && m_sockets[idx].rx)
        {
            m_sockets[idx].rx->Close();
            m_sockets[idx].rx = nullptr;
        }
    }

    void InterceptDownTarget(ns3::Ptr<ns3::Node> node)
    {
        auto tcp = node->GetObject<ns3::TcpL4Protocol>();
        auto down = tcp->GetDownTarget();
        tcp->SetDownTarget(ns3::IpL4Protocol::DownTargetCallback(
            [this, down](ns3::Ptr<ns3::Packet> p,
                         ns3::Ipv4Address s,
                         ns3::Ipv4Address d,
                         uint8_t proto,
                         ns3::Ptr<ns3::Ipv4Route> r) {
                Stamp(p, s.Get(), d.Get());
                down(p, s, d, proto, r);
            }));
    }

    /// Put the flow's class in the DSCP bits of the TOS tag, keeping the ECN bits.
    void Stamp(ns3::Ptr<ns3::Packet> p, uint32_t s, uint32_t d)
    {
        uint8_t ports[4];
        p->CopyData(ports, 4);
        uint16_t sp = uint16_t(ports[0] << 8 | ports[1]);
        uint16_t dp = uint16_t(ports[2] << 8 | ports[3]);
        auto it = m_byTuple.find(TupleKey(s, d, sp, dp)); // data
        if (it == m_byTuple.end())
        {
            it = m_byTuple.find(TupleKey(d, s, dp, sp)); // ACKs
            if (it == m_byTuple.end())
            {
                return;
            }
        }
        ns3::SocketIpTosTag tag;
        bool had = p->RemovePacketTag(tag);
        uint8_t ecn = had ? (tag.GetTos() & 0x3) : 0;
        tag.SetTos(uint8_t(m_session.Flow(it->second).cls << 2) | ecn);
        p->AddPacketTag(tag);
    }

    Fabric& m_fabric;
    Session& m_session;
    std::vector<Sockets> m_sockets;
    std::unordered_map<std::pair<uint64_t, uint32_t>, uint32_t, TupleHash> m_byTuple;
    std::unordered_map<uint64_t, ns3::Ptr<ns3::Socket>> m_listeners;
};

} // namespace hpsched

#endif
