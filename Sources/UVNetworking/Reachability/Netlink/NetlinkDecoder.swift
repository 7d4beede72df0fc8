/// What one datagram held: the messages decoded in order, and, when its framing broke, why the
/// rest could not be read.
struct NetlinkDatagram: Equatable {
    var messages: [NetlinkMessage]
    /// Set when a header was truncated or its length lied: the bytes after `messages` were
    /// dropped, since without a trustworthy length the next message's start is unknown.
    var framingError: NetlinkDecodingError?
}

/// Decodes rtnetlink datagrams, never reading beyond the bytes given.
///
/// Two kinds of damage, two answers: a header whose length cannot be trusted ends the walk
/// (`NetlinkDatagram.framingError`) because nothing after it can be located; a sound header with
/// a bad body (a short ifinfomsg, a lying attribute) yields `.malformed` for that message only
/// and the walk goes on at the next aligned header, which its length still locates. Either way
/// the caller knows it missed something and can dump again.
enum NetlinkDecoder {
    static func decode(_ datagram: [UInt8]) -> NetlinkDatagram {
        let reader = NetlinkReader(datagram[...])
        var messages: [NetlinkMessage] = []
        var offset = 0
        while offset < reader.count {
            let remaining = reader.count - offset
            guard remaining >= Netlink.headerSize else {
                return NetlinkDatagram(messages: messages, framingError: .truncatedHeader(offset: offset))
            }
            let length = reader.uint32(at: offset)!
            guard length >= UInt32(Netlink.headerSize), length <= UInt32(remaining) else {
                return NetlinkDatagram(messages: messages,
                                       framingError: .badMessageLength(offset: offset, length: length, remaining: remaining))
            }
            let type = reader.uint16(at: offset + 4)!
            let flags = reader.uint16(at: offset + 6)!
            let sequence = reader.uint32(at: offset + 8)!
            let payload = reader.slice(at: offset + Netlink.headerSize, count: Int(length) - Netlink.headerSize)!
            let body: NetlinkMessage.Body
            do {
                body = try decodeBody(type: type, payload: payload)
            } catch {
                body = .malformed(error)
            }
            messages.append(NetlinkMessage(type: type, flags: flags, sequence: sequence, body: body))
            // The last message may omit its padding; never step past the end.
            offset += min(Netlink.aligned(Int(length)), remaining)
        }
        return NetlinkDatagram(messages: messages, framingError: nil)
    }

    private static func decodeBody(type: UInt16, payload: ArraySlice<UInt8>) throws(NetlinkDecodingError) -> NetlinkMessage.Body {
        typealias T = Netlink.MessageType
        switch type {
        case T.done:
            // A dump the kernel stopped short ends in NLMSG_DONE carrying a negative errno
            // (netlink_dump's dump_done_errno): a refusal, not the end of a complete answer.
            if let code = NetlinkReader(payload).int32(at: 0), code < 0 { return .error(code: code) }
            return .done
        case T.error:
            guard let code = NetlinkReader(payload).int32(at: 0) else { throw .truncatedPayload(type: type) }
            return .error(code: code)
        case T.newLink, T.delLink:
            guard let link = try decodeLink(type: type, payload) else { return .other(type: type) }
            return type == T.newLink ? .newLink(link) : .delLink(link)
        case T.newAddress, T.delAddress:
            guard let address = try decodeAddress(type: type, payload) else { return .other(type: type) }
            return type == T.newAddress ? .newAddress(address) : .delAddress(address)
        case T.newRoute, T.delRoute:
            guard let route = try decodeRoute(type: type, payload) else { return .other(type: type) }
            return type == T.newRoute ? .newRoute(route) : .delRoute(route)
        default:
            return .other(type: type)
        }
    }

    /// ifinfomsg (16 bytes): family u8, pad u8, type u16, index s32, flags u32, change u32.
    /// Nil for a family other than AF_UNSPEC: AF_BRIDGE sends link messages about bridge
    /// ports, whose RTM_DELLINK means "left the bridge", not "gone".
    private static func decodeLink(type: UInt16, _ payload: ArraySlice<UInt8>) throws(NetlinkDecodingError) -> NetlinkLink? {
        let reader = NetlinkReader(payload)
        let fixed = 16
        guard reader.count >= fixed else { throw .truncatedPayload(type: type) }
        guard reader.uint8(at: 0)! == Netlink.Family.unspecified else { return nil }
        var link = NetlinkLink(index: reader.int32(at: 4)!, type: reader.uint16(at: 2)!, flags: reader.uint32(at: 8)!, name: "")
        for attribute in try NetlinkAttributes.parse(reader.slice(at: fixed, count: reader.count - fixed)!)
        where attribute.type == Netlink.LinkAttribute.name {
            // A C string: up to the first NUL.
            link.name = String(decoding: attribute.value.prefix { $0 != 0 }, as: UTF8.self)
        }
        return link
    }

    /// ifaddrmsg (8 bytes): family u8, prefixlen u8, flags u8, scope u8, index u32.
    /// Nil for families other than IPv4 and IPv6.
    private static func decodeAddress(type: UInt16, _ payload: ArraySlice<UInt8>) throws(NetlinkDecodingError) -> NetlinkAddress? {
        let reader = NetlinkReader(payload)
        let fixed = 8
        guard reader.count >= fixed else { throw .truncatedPayload(type: type) }
        let family = reader.uint8(at: 0)!
        guard let size = addressSize(family) else { return nil }
        var flags = UInt32(reader.uint8(at: 2)!)
        var address: ArraySlice<UInt8>?
        var local: ArraySlice<UInt8>?
        for attribute in try NetlinkAttributes.parse(reader.slice(at: fixed, count: reader.count - fixed)!) {
            switch attribute.type {
            case Netlink.AddressAttribute.address, Netlink.AddressAttribute.local:
                guard attribute.value.count == size else { throw .badAttributeValue(type: attribute.type) }
                if attribute.type == Netlink.AddressAttribute.local { local = attribute.value } else { address = attribute.value }
            case Netlink.AddressAttribute.flags:
                guard let value = attribute.uint32 else { throw .badAttributeValue(type: attribute.type) }
                flags = value
            default:
                break
            }
        }
        guard let chosen = local ?? address else { throw .truncatedPayload(type: type) }
        return NetlinkAddress(family: family, prefixLength: reader.uint8(at: 1)!, flags: flags,
                              index: reader.int32(at: 4)!, address: Array(chosen))
    }

    /// rtmsg (12 bytes): family, dst_len, src_len, tos, table, protocol, scope, type (u8 each),
    /// flags u32. Nil for families other than IPv4 and IPv6 (multicast routing, MPLS).
    private static func decodeRoute(type: UInt16, _ payload: ArraySlice<UInt8>) throws(NetlinkDecodingError) -> NetlinkRoute? {
        let reader = NetlinkReader(payload)
        let fixed = 12
        guard reader.count >= fixed else { throw .truncatedPayload(type: type) }
        let family = reader.uint8(at: 0)!
        guard let size = addressSize(family) else { return nil }
        let destinationLength = reader.uint8(at: 1)!
        guard Int(destinationLength) <= size * 8 else { throw .truncatedPayload(type: type) }
        var route = NetlinkRoute(family: family, destinationLength: destinationLength, destination: [],
                                 table: UInt32(reader.uint8(at: 4)!), type: reader.uint8(at: 7)!, priority: 0, nexthops: [],
                                 tos: reader.uint8(at: 3)!)
        let flags = reader.uint32(at: 8)!
        var single = NetlinkNexthop(interfaceIndex: 0, gateway: nil, flags: flags)
        var multipath: [NetlinkNexthop]?
        for attribute in try NetlinkAttributes.parse(reader.slice(at: fixed, count: reader.count - fixed)!) {
            switch attribute.type {
            case Netlink.RouteAttribute.destination:
                guard attribute.value.count == size else { throw .badAttributeValue(type: attribute.type) }
                route.destination = Array(attribute.value)
            case Netlink.RouteAttribute.gateway:
                guard attribute.value.count == size else { throw .badAttributeValue(type: attribute.type) }
                single.gateway = Array(attribute.value)
            case Netlink.RouteAttribute.outputInterface, Netlink.RouteAttribute.priority, Netlink.RouteAttribute.table:
                guard let value = attribute.uint32 else { throw .badAttributeValue(type: attribute.type) }
                switch attribute.type {
                case Netlink.RouteAttribute.outputInterface: single.interfaceIndex = Int32(bitPattern: value)
                case Netlink.RouteAttribute.priority: route.priority = value
                default: route.table = value
                }
            case Netlink.RouteAttribute.multipath:
                multipath = try decodeNexthops(attribute.value, addressSize: size)
            default:
                break
            }
        }
        if route.destination.isEmpty, destinationLength != 0 { throw .truncatedPayload(type: type) }
        route.nexthops = multipath ?? [single]
        return route
    }

    /// RTA_MULTIPATH: rtnexthop records (len u16, flags u8, hops u8, ifindex s32), each followed
    /// by its own attributes (RTA_GATEWAY) within its length.
    private static func decodeNexthops(_ bytes: ArraySlice<UInt8>, addressSize: Int) throws(NetlinkDecodingError) -> [NetlinkNexthop] {
        let reader = NetlinkReader(bytes)
        let fixed = 8
        var nexthops: [NetlinkNexthop] = []
        var offset = 0
        while reader.count - offset >= fixed {
            let length = Int(reader.uint16(at: offset)!)
            guard length >= fixed, length <= reader.count - offset else {
                throw .badAttributeLength(type: Netlink.RouteAttribute.multipath)
            }
            // rtm_flags' RTNH_F_LINKDOWN/DEAD describe a single-path route; a nexthop has its own.
            var nexthop = NetlinkNexthop(interfaceIndex: reader.int32(at: offset + 4)!, gateway: nil,
                                         flags: UInt32(reader.uint8(at: offset + 2)!))
            for attribute in try NetlinkAttributes.parse(reader.slice(at: offset + fixed, count: length - fixed)!)
            where attribute.type == Netlink.RouteAttribute.gateway {
                guard attribute.value.count == addressSize else { throw .badAttributeValue(type: attribute.type) }
                nexthop.gateway = Array(attribute.value)
            }
            nexthops.append(nexthop)
            offset += min(Netlink.aligned(length), reader.count - offset)
        }
        return nexthops
    }

    /// Bytes of an address of `family`, nil for a family the machine does not follow.
    static func addressSize(_ family: UInt8) -> Int? {
        switch family {
        case Netlink.Family.inet: 4
        case Netlink.Family.inet6: 16
        default: nil
        }
    }
}
