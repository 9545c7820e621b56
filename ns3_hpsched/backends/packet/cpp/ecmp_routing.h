// Per-flow ECMP routing: every node forwards by a table destination host -> equal-cost
// next hops (interface indices), choosing hops[FlowHash(five-tuple, node seed) % n].
// The tables and seeds come from the Python Topology once, so every flow crosses exactly
// Topology.flow_path(). Lookup is O(1) per packet (ns-3's global routing scans every
// host route per packet and needs minutes to set up a k=16 fat-tree).
#ifndef HPSCHED_ECMP_ROUTING_H
#define HPSCHED_ECMP_ROUTING_H

#include "hash.h"

#include "ns3/ipv4-route.h"
#include "ns3/ipv4-routing-helper.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"
#include "ns3/node.h"

#include <cstdint>
#include <vector>

namespace hpsched
{

/// Host h has address 10.0.0.0 | (h + 1) (ecmp.host_ip).
constexpr uint32_t HOST_IP_BASE = 0x0A000001;

class EcmpRouting : public ns3::Ipv4RoutingProtocol
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("hpsched::EcmpRouting")
                                     .SetParent<ns3::Ipv4RoutingProtocol>()
                                     .SetGroupName("Internet")
                                     .AddConstructor<EcmpRouting>();
        return tid;
    }

    /// Install the table: ``rowOfHost[h]`` indexes a row of interfaces
    /// ``ifaces[offsets[row] .. offsets[row+1])``; ``selfHost`` is this node's host
    /// number or -1 for a switch.
    void SetTable(uint64_t seed,
                  int64_t selfHost,
                  std::vector<uint32_t> rowOfHost,
                  std::vector<uint32_t> offsets,
                  std::vector<uint32_t> ifaces)
    {
        m_seed = seed;
        m_selfHost = selfHost;
        m_rowOfHost = std::move(rowOfHost);
        m_offsets = std::move(offsets);
        m_ifaces = std::move(ifaces);
        m_routes.clear();
    }

    ns3::Ptr<ns3::Ipv4Route> RouteOutput(ns3::Ptr<ns3::Packet> p,
                                         const ns3::Ipv4Header& header,
                                         ns3::Ptr<ns3::NetDevice> oif,
                                         ns3::Socket::SocketErrno& sockerr) override
    {
        uint32_t src = header.GetSource().Get();
        if (m_selfHost >= 0)
        {
            src = HOST_IP_BASE + uint32_t(m_selfHost);
        }
        auto route = Lookup(p, src, header.GetDestination().Get());
        sockerr = route ? ns3::Socket::ERROR_NOTERROR : ns3::Socket::ERROR_NOROUTETOHOST;
        return route;
    }

    bool RouteInput(ns3::Ptr<const ns3::Packet> p,
                    const ns3::Ipv4Header& header,
                    ns3::Ptr<const ns3::NetDevice> idev,
                    const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback& mcb,
                    const LocalDeliverCallback& lcb,
                    const ErrorCallback& ecb) override
    {
        uint32_t dst = header.GetDestination().Get();
        uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);
        uint32_t host = dst - HOST_IP_BASE;
        bool local = (host < m_rowOfHost.size()) ? int64_t(host) == m_selfHost
                                                   : m_ipv4->IsDestinationAddress(header.GetDestination(), iif);
        if (local)
        {
            if (lcb.IsNull())
            {
                return false;
            }
            lcb(p, header, iif);
            return true;
        }
        auto route = Lookup(p, header.GetSource().Get(), dst);
        if (!route)
        {
            ecb(p, header, ns3::Socket::ERROR_NOROUTETOHOST);
            return true;
        }
        ucb(route, p, header);
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}

    void SetIpv4(ns3::Ptr<ns3::Ipv4> ipv4) override
    {
        m_ipv4 = ipv4; // the base class keeps its pointer private
    }

    void PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper> stream, ns3::Time::Unit) const override
    {
        *stream->GetStream() << "hpsched::EcmpRouting: " << m_rowOfHost.size() << " hosts, "
                             << m_offsets.size() - 1 << " next-hop sets, seed " << m_seed << "\n";
    }

  protected:
    void DoDispose() override
    {
        m_ipv4 = nullptr;
        m_routes.clear();
        ns3::Ipv4RoutingProtocol::DoDispose();
    }

  private:
    /// The route for a packet (whose data starts with the L4 header) or null.
    ns3::Ptr<ns3::Ipv4Route> Lookup(ns3::Ptr<const ns3::Packet> p, uint32_t src, uint32_t dst)
    {
        uint32_t host = dst - HOST_IP_BASE;
        if (host >= m_rowOfHost.size())
        {
            return nullptr;
        }
        uint32_t row = m_rowOfHost[host];
        uint32_t first = m_offsets[row];
        uint32_t n = m_offsets[row + 1] - first;
        if (n == 0)
        {
            return nullptr;
        }
        uint32_t pick = 0;
        if (n > 1)
        {
            uint8_t ports[4] = {0, 0, 0, 0};
            if (p)
            {
                p->CopyData(ports, 4);
            }
            uint16_t sport = uint16_t(ports[0] << 8 | ports[1]);
            uint16_t dport = uint16_t(ports[2] << 8 | ports[3]);
            pick = uint32_t(FlowHash(src, dst, sport, dport, m_seed) % n);
        }
        return RouteVia(m_ifaces[first + pick]);
    }

    /// One shared route object per output interface (built on first use).
    ns3::Ptr<ns3::Ipv4Route> RouteVia(uint32_t iface)
    {
        if (iface >= m_routes.size())
        {
            m_routes.resize(iface + 1);
        }
        if (!m_routes[iface])
        {
            auto route = ns3::Create<ns3::Ipv4Route>();
            route->SetSource(m_ipv4->GetAddress(iface, 0).GetLocal());
            route->SetGateway(ns3::Ipv4Address::GetZero());
            route->SetOutputDevice(m_ipv4->GetNetDevice(iface));
            m_routes[iface] = route;
        }
        return m_routes[iface];
    }

    ns3::Ptr<ns3::Ipv4> m_ipv4;
    uint64_t m_seed{0};
    int64_t m_selfHost{-1};
    std::vector<uint32_t> m_rowOfHost;
    std::vector<uint32_t> m_offsets{0};
    std::vector<uint32_t> m_ifaces;
    std::vector<ns3::Ptr<ns3::Ipv4Route>> m_routes;
};

/// Gives every node its own EcmpRouting when the internet stack is installed.
class EcmpRoutingHelper : public ns3::Ipv4RoutingHelper
{
  public:
    EcmpRoutingHelper* Copy() const override
    {
        return new EcmpRoutingHelper(*this);
    }

    ns3::Ptr<ns3::Ipv4RoutingProtocol> Create(ns3::Ptr<ns3::Node>) const override
    {
        return ns3::CreateObject<EcmpRouting>();
    }
};

} // namespace hpsched

#endif
