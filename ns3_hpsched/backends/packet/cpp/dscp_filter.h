// Classify IPv4 packets into strict-priority bands by their DSCP (TOS >> 2).
// Forwarding nodes drop the socket priority tag and map only 4 levels from the TOS,
// so the DSCP field is the carrier of a flow's priority class.
#ifndef HPSCHED_DSCP_FILTER_H
#define HPSCHED_DSCP_FILTER_H

#include "ns3/ipv4-packet-filter.h"
#include "ns3/ipv4-queue-disc-item.h"

namespace hpsched
{

class DscpPacketFilter : public ns3::Ipv4PacketFilter
{
  public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId tid = ns3::TypeId("hpsched::DscpPacketFilter")
                                     .SetParent<ns3::Ipv4PacketFilter>()
                                     .SetGroupName("TrafficControl")
                                     .AddConstructor<DscpPacketFilter>();
        return tid;
    }

  private:
    int32_t DoClassify(ns3::Ptr<ns3::QueueDiscItem> item) const override
    {
        auto ipItem = ns3::DynamicCast<ns3::Ipv4QueueDiscItem>(item);
        return ipItem ? int32_t(ipItem->GetHeader().GetTos() >> 2) : PF_NO_MATCH;
    }
};

} // namespace hpsched

#endif
