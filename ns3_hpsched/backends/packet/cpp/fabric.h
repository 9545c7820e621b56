// The ns-3 realisation of a Topology: nodes, point-to-point links, the internet stack
// with EcmpRouting, a K-band strict-priority queue disc (DSCP-classified) on every
// egress, and addresses. Ports are numbered as in the Topology: link i gives port 2i
// (device on node a) and 2i+1 (device on node b).
#ifndef HPSCHED_FABRIC_H
#define HPSCHED_FABRIC_H

#include "dscp_filter.h"
#include "ecmp_routing.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace hpsched
{

class Fabric
{
  public:
    /// Create nodes and links and install the internet stack (no queue discs, no addresses).
    void Build(uint32_t nNodes,
               uint32_t nHosts,
               const std::vector<uint32_t>& linkA,
               const std::vector<uint32_t>& linkB,
               const std::vector<double>& rateBps,
               const std::vector<double>& delayS,
               uint32_t mtu,
               uint32_t deviceQueuePackets)
    {
        DscpPacketFilter::GetTypeId(); // register before use
        EcmpRouting::GetTypeId();
        m_nHosts = nHosts;
        m_nodes.Create(nNodes);
        m_ifaceTo.assign(nNodes, {});
        ns3::InternetStackHelper stack;
        EcmpRoutingHelper routing;
        stack.SetRoutingHelper(routing);
        stack.Install(m_nodes);
        ns3::PointToPointHelper p2p;
        p2p.SetQueue("ns3::DropTailQueue<Packet>",
                     "MaxSize",
                     ns3::QueueSizeValue(ns3::QueueSize(ns3::QueueSizeUnit::PACKETS, deviceQueuePackets)));
        p2p.SetDeviceAttribute("Mtu", ns3::UintegerValue(mtu));
        for (size_t i = 0; i < linkA.size(); ++i)
        {
            p2p.SetDeviceAttribute("DataRate", ns3::DataRateValue(ns3::DataRate(uint64_t(rateBps[i]))));
            p2p.SetChannelAttribute("Delay", ns3::TimeValue(ns3::Seconds(delayS[i])));
            auto devs = p2p.Install(m_nodes.Get(linkA[i]), m_nodes.Get(linkB[i]));
            m_ports.push_back(devs.Get(0));
            m_ports.push_back(devs.Get(1));
            m_portNode.push_back(linkA[i]);
            m_portNode.push_back(linkB[i]);
            m_portPeer.push_back(linkB[i]);
            m_portPeer.push_back(linkA[i]);
        }
        m_qdiscs.assign(m_ports.size(), nullptr);
    }

    /// Install the strict-priority root (nBands bands, DSCP filter) on one port, with
    /// children of type ``childType`` configured by attribute name/value strings.
    void InstallQueueDisc(uint32_t port,
                          uint32_t nBands,
                          const std::string& childType,
                          const std::vector<std::string>& names,
                          const std::vector<std::string>& values)
    {
        ns3::Ptr<ns3::NetDevice> dev = m_ports[port];
        auto root = ns3::CreateObject<ns3::PrioQueueDisc>();
        root->SetAttribute("Priomap", ns3::StringValue("0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"));
        root->AddPacketFilter(ns3::CreateObject<DscpPacketFilter>());
        ns3::ObjectFactory child;
        child.SetTypeId(childType);
        for (size_t i = 0; i < names.size(); ++i)
        {
            child.Set(names[i], ns3::StringValue(values[i]));
        }
        for (uint32_t b = 0; b < nBands; ++b)
        {
            auto cls = ns3::CreateObject<ns3::QueueDiscClass>();
            cls->SetQueueDisc(child.Create<ns3::QueueDisc>());
            root->AddQueueDiscClass(cls);
        }
        auto tc = dev->GetNode()->GetObject<ns3::TrafficControlLayer>();
        tc->SetRootQueueDiscOnDevice(dev, root);
        m_qdiscs[port] = root;
    }

    /// Give host h the address 10.0.0.(h+1) and switch interfaces 11.x.y.z (/32).
    void AssignAddresses()
    {
        uint32_t next = 0x0B000001;
        for (size_t port = 0; port < m_ports.size(); ++port)
        {
            ns3::Ptr<ns3::NetDevice> dev = m_ports[port];
            uint32_t node = m_portNode[port];
            auto ipv4 = dev->GetNode()->GetObject<ns3::Ipv4>();
            int32_t iface = ipv4->AddInterface(dev);
            uint32_t addr = node < m_nHosts ? HOST_IP_BASE + node : next++;
            uint32_t mask = node < m_nHosts ? 0xFF000000 : 0xFFFFFFFF;
            ipv4->AddAddress(iface, ns3::Ipv4InterfaceAddress(ns3::Ipv4Address(addr), ns3::Ipv4Mask(mask)));
            ipv4->SetMetric(iface, 1);
            ipv4->SetUp(iface);
            m_ifaceTo[node][m_portPeer[port]] = uint32_t(iface);
        }
    }

    /// Give node ``node`` its routing table; next hops are node numbers (converted here
    /// to interface indices).
    void SetRoutes(uint32_t node,
                   uint64_t seed,
                   const uint32_t* rowOfHost,
                   const uint32_t* offsets,
                   uint32_t nRows,
                   const uint32_t* hopNodes)
    {
        std::vector<uint32_t> ifaces(offsets[nRows]);
        for (uint32_t i = 0; i < offsets[nRows]; ++i)
        {
            ifaces[i] = m_ifaceTo[node].at(hopNodes[i]);
        }
        auto routing = ns3::DynamicCast<EcmpRouting>(m_nodes.Get(node)->GetObject<ns3::Ipv4>()->GetRoutingProtocol());
        routing->SetTable(seed,
                          node < m_nHosts ? int64_t(node) : -1,
                          std::vector<uint32_t>(rowOfHost, rowOfHost + m_nHosts),
                          std::vector<uint32_t>(offsets, offsets + nRows + 1),
                          std::move(ifaces));
    }

    ns3::Ptr<ns3::Node> GetNode(uint32_t i) const
    {
        return m_nodes.Get(i);
    }

    uint32_t GetNHosts() const
    {
        return m_nHosts;
    }

    ns3::Ptr<ns3::QueueDisc> GetQueueDisc(uint32_t port) const
    {
        return m_qdiscs[port];
    }

    /// Number of ports (two per link; the peer of port p is port p ^ 1).
    uint32_t NPorts() const
    {
        return uint32_t(m_ports.size());
    }

    /// The device that transmits on ``port`` (used by PFC and error-model injection).
    ns3::Ptr<ns3::NetDevice> GetDevice(uint32_t port) const
    {
        return m_ports[port];
    }

    /// Per-port counters from the root queue discs (children's drops and marks included).
    void PortStats(uint64_t* txBytes, uint64_t* drops, uint64_t* marks) const
    {
        for (size_t p = 0; p < m_qdiscs.size(); ++p)
        {
            const auto& s = m_qdiscs[p]->GetStats();
            txBytes[p] = s.nTotalSentBytes;
            drops[p] = s.nTotalDroppedPackets;
            marks[p] = s.nTotalMarkedPackets;
        }
    }

  private:
    uint32_t m_nHosts{0};
    ns3::NodeContainer m_nodes;
    std::vector<ns3::Ptr<ns3::NetDevice>> m_ports;
    std::vector<uint32_t> m_portNode;
    std::vector<uint32_t> m_portPeer;
    std::vector<ns3::Ptr<ns3::QueueDisc>> m_qdiscs;
    std::vector<std::unordered_map<uint32_t, uint32_t>> m_ifaceTo; // node -> peer -> iface
};

} // namespace hpsched

#endif
